/* Progressive enhancement for the search pages; everything works without it. */
(function () {
  "use strict";

  // Show only the option that applies to the chosen method (both are visible without JS).
  function syncMethodFields(root) {
    root.querySelectorAll("form").forEach(function (form) {
      var select = form.querySelector("select[name='group'], select[name='method']");
      if (!select) return;
      form.querySelectorAll("[data-method-field]").forEach(function (field) {
        var wanted = field.getAttribute("data-method-field");
        if (wanted) field.hidden = wanted !== select.value;
      });
    });
  }

  // The threshold slider's number next to it.
  function syncOutput(input) {
    var output = document.getElementById(input.id + "-value");
    if (output) output.textContent = Number(input.value).toFixed(2);
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("input[type='range']")) syncOutput(event.target);
  });
  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("select[name='group'], select[name='method']")) {
      syncMethodFields(document);
    }
  });

  // "why?" inline: a second click folds the explanation away instead of loading it again.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var link = event.detail && event.detail.elt;
    if (!link || !link.classList || !link.classList.contains("why")) return;
    var panel = document.getElementById(link.getAttribute("aria-controls"));
    if (panel && panel.childElementCount > 0) {
      event.preventDefault();
      panel.replaceChildren();
      link.setAttribute("aria-expanded", "false");
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var target = (event.detail && event.detail.target) || event.target;
    if (!target || !target.classList) return;
    if (target.classList.contains("why-panel")) {
      var link = document.querySelector("a.why[aria-controls='" + target.id + "']");
      if (link) link.setAttribute("aria-expanded", "true");
      return;
    }
    // Announce the new summary once, not the whole result list.
    var status = document.getElementById("results-status");
    if (status) {
      var summary = target.querySelector(".summary-counts, .form-errors h2");
      status.textContent = summary ? summary.textContent : "";
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    syncMethodFields(document);
    document.querySelectorAll("input[type='range']").forEach(syncOutput);
    // Links that load "why?" inline are toggles once JS runs.
    document.querySelectorAll("a.why[hx-get]").forEach(function (link) {
      link.setAttribute("aria-expanded", "false");
    });
  });
  document.addEventListener("htmx:load", function (event) {
    var root = event.detail && event.detail.elt;
    if (!root || !root.querySelectorAll) return;
    root.querySelectorAll("a.why[hx-get]").forEach(function (link) {
      if (!link.hasAttribute("aria-expanded")) link.setAttribute("aria-expanded", "false");
    });
    syncMethodFields(document);
  });
})();
