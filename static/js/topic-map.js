/* The map of the topics (templates/search/_topic_map.html) is open in the markup, so it shows
   without JavaScript; on a narrow screen it starts folded so the first results stay on the
   first screen, and a reader's own open or fold survives the results being swapped by htmx. */
(function () {
  "use strict";
  var narrow = window.matchMedia("(max-width: 55.99rem)");
  var chosen = null; // the reader's last open/fold of the map in this page's life

  function settle(root) {
    (root || document).querySelectorAll("details.topic-map").forEach(function (map) {
      var open = chosen !== null ? chosen : !narrow.matches;
      if (map.open !== open) map.open = open;
    });
  }

  // The reader's choice, from the summary's click (Enter and Space on it click too); not from
  // "toggle" events, which the parser and settle() cause as well.
  document.addEventListener("click", function (event) {
    var summary = event.target.closest && event.target.closest("details.topic-map > summary");
    if (summary) chosen = !summary.parentNode.open;
  });
  document.addEventListener("DOMContentLoaded", function () { settle(document); });
  document.addEventListener("htmx:load", function (event) {
    var root = event.detail && event.detail.elt;
    if (root && root.querySelectorAll) settle(root.parentNode || root);
  });
})();
