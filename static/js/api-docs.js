/* /api/docs: small repairs to the markup Swagger UI renders, for assistive technology.
   Swagger UI re-renders parts of the page as it is used, so they are applied after each change. */
(function () {
  "use strict";
  function repair(root) {
    // Section headings ("default", "Schemas") come right after the <h1> title as <h3>/<h4>.
    root.querySelectorAll("h3.opblock-tag, .models > h4, section.models h4").forEach(function (h) {
      if (h.getAttribute("aria-level") !== "2") {
        h.setAttribute("role", "heading");
        h.setAttribute("aria-level", "2");
      }
    });
    // An operation's summary is one button; the path inside it is also a link to the same
    // place, which nests a control in a control. The button alone is enough.
    root.querySelectorAll(".opblock-summary-control a[href]").forEach(function (a) {
      a.removeAttribute("href");
    });
  }
  var target = document.getElementById("swagger-ui");
  if (!target) return;
  new MutationObserver(function () { repair(target); }).observe(target, { childList: true, subtree: true });
  repair(target);
})();
