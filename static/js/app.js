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

  // Enter in a changed box fires "change" and then "submit", and the search form asks htmx on
  // both: the same search went out twice, the first aborted (errors in the console). The second
  // of two identical searches within a moment is dropped before it is sent.
  var lastSearch = { key: null, at: 0 };
  document.addEventListener("htmx:confirm", function (event) {
    var form = event.detail && event.detail.elt;
    if (!form || !form.matches || !form.matches("form.search-form")) return;
    var key = new URLSearchParams(new FormData(form)).toString();
    var now = Date.now();
    if (key === lastSearch.key && now - lastSearch.at < 1000) {
      event.preventDefault();
      return;
    }
    lastSearch = { key: key, at: now };
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
      // A view chosen inside the panel ("Shared passages"...): keep the focus on that choice.
      var chosen = event.detail && event.detail.requestConfig && event.detail.requestConfig.elt;
      if (chosen && chosen.classList && chosen.classList.contains("why-tab")) {
        var current = target.querySelector(".why-tab[aria-current='page']");
        if (current) current.focus();
      }
      return;
    }
    // A new page of results (Next, Previous): the reader continues at the top of the list, as
    // after a page load, not at the bottom where the link was with focus lost on <body>.
    var from = event.detail && event.detail.requestConfig && event.detail.requestConfig.elt;
    if (from && from.closest && from.closest(".pagination") && target.id === "results") {
      var heading = target.querySelector("h2") || target;
      if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
      heading.focus({ preventScroll: true });
      target.scrollIntoView({ block: "start" });
    }
    // Announce the new summary once, not the whole result list.
    var status = document.getElementById("results-status");
    if (status) {
      var summary = target.querySelector(".summary-counts, .form-errors h2");
      status.textContent = summary ? summary.textContent : "";
    }
  });

  // "N very similar results were omitted — show them": unfold every group of the list in place
  // (the link's own address, for no JavaScript, repeats the search ungrouped).
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.show-omitted");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    var list = link.closest("#results, main") || document;
    var groups = list.querySelectorAll("details.similar");
    if (!groups.length) return;
    event.preventDefault();
    groups.forEach(function (details) { details.open = true; });
    var note = link.closest(".omitted");
    if (note) {
      note.textContent = "All similar results are shown, each under the result it is similar to.";
      note.focus();
    }
  });

  // "/" focuses the search box, as on most search sites (not while typing somewhere).
  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    var active = document.activeElement;
    if (active && (active.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName))) return;
    var box = document.querySelector("input[type='search'][name='q']");
    if (!box) return;
    event.preventDefault();
    box.focus();
    box.select();
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
