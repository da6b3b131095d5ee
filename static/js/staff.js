/* Keyboard shortcuts of the duplicates report and the side-by-side page (templates/staff/_shortcuts.html
   lists them). Progressive enhancement: every action is a link or a form button that works without
   it; the keys only move the selection and press those. Nothing fires while typing in a field. */
(function () {
  "use strict";

  function typing(element) {
    return !!element && (element.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(element.tagName));
  }

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("tr[data-pair]"));
  }

  function selectedIndex(list) {
    for (var i = 0; i < list.length; i++) {
      if (list[i].classList.contains("selected")) return i;
    }
    return -1;
  }

  // The list's place is the address's #pair-… fragment (where a decision sends the reviewer back
  // to), so a reload or the Back button keeps it too.
  function select(list, index) {
    if (index < 0 || index >= list.length) return;
    list.forEach(function (row) {
      row.classList.remove("selected");
      row.removeAttribute("aria-current");
    });
    var row = list[index];
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    if (!row.hasAttribute("tabindex")) row.setAttribute("tabindex", "-1");
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "center" });
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", "#" + row.id);
    }
  }

  function press(root, key) {
    var target = root.querySelector("[data-shortcut='" + key + "']");
    if (target) target.click();
    return !!target;
  }

  function toggleHelp() {
    var help = document.getElementById("shortcuts");
    if (!help) return;
    help.hidden = false;
    help.open = !help.open;
    if (help.open) help.querySelector("summary").focus();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    var active = document.activeElement;
    if (typing(active)) {
      // Esc leaves the note field, so the keys work again.
      if (event.key === "Escape") active.blur();
      return;
    }
    var key = event.key;
    if (key === "?") {
      event.preventDefault();
      toggleHelp();
      return;
    }
    if (event.shiftKey) return;
    var list = rows();
    if (!list.length) {
      // The side-by-side page: one pair, its "previous" / "next" links and its decision form.
      if (["j", "k", "d", "n"].indexOf(key) >= 0 && press(document, key)) event.preventDefault();
      return;
    }
    var at = selectedIndex(list);
    if (key === "j" || key === "k") {
      event.preventDefault();
      var to = at < 0 ? 0 : at + (key === "j" ? 1 : -1);
      // Past either end of the page: the next (or previous) page of the list.
      var page = document.querySelector(".pagination a[rel='" + (key === "j" ? "next" : "prev") + "']");
      if ((to >= list.length || to < 0) && page) page.click();
      else select(list, to);
    } else if ((key === "d" || key === "n") && at >= 0) {
      event.preventDefault();
      press(list[at], key);
    } else if ((key === "o" || key === "Enter") && at >= 0 && active === list[at]) {
      var open = list[at].querySelector("[data-open]");
      if (open) {
        event.preventDefault();
        open.click();
      }
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    var help = document.getElementById("shortcuts");
    if (help) help.hidden = false;
    var hash = window.location.hash.slice(1);
    if (!hash) return;
    var list = rows();
    for (var i = 0; i < list.length; i++) {
      if (list[i].id === hash) {
        list[i].classList.add("selected");
        list[i].setAttribute("aria-current", "true");
        list[i].setAttribute("tabindex", "-1");
        list[i].focus({ preventScroll: true });
        return;
      }
    }
  });
})();
