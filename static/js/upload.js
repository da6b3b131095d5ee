/* The upload page: shows how much of the file has been sent while it uploads (a large PDF,
   mailbox or web archive takes a while). Progressive enhancement: without this script the form
   posts as usual; with it, the same form is posted by XMLHttpRequest (whose upload events give
   the bytes sent), and the browser then goes where the server's answer went (the job page), or
   shows the form again with the server's errors. */
(function () {
  "use strict";

  function megabytes(bytes) {
    return (bytes / 1048576).toFixed(1) + " MB";
  }

  function status(form) {
    var box = form.querySelector(".upload-transfer");
    if (!box) {
      box = document.createElement("div");
      box.className = "upload-transfer";
      box.setAttribute("role", "status");
      box.setAttribute("aria-live", "polite");
      var bar = document.createElement("progress");
      bar.setAttribute("aria-label", "Upload sent");
      bar.max = 1;
      bar.value = 0;
      var text = document.createElement("span");
      text.className = "upload-transfer-text";
      box.appendChild(bar);
      box.appendChild(document.createTextNode(" "));
      box.appendChild(text);
      form.appendChild(box);
    }
    return box;
  }

  function show(form, sent, total, words) {
    var box = status(form);
    var bar = box.querySelector("progress");
    if (total > 0) {
      bar.max = total;
      bar.value = sent;
    } else {
      bar.removeAttribute("value"); // unknown size: an indeterminate bar
    }
    box.querySelector(".upload-transfer-text").textContent = words;
  }

  // The server answered with the form again (an error): its form replaces this one.
  function replaceForm(form, html) {
    var answer = new DOMParser().parseFromString(html, "text/html");
    var fresh = answer.querySelector("form.upload-form");
    if (!fresh) return false;
    form.replaceWith(document.importNode(fresh, true));
    return true;
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form.upload-form")) return;
    if (!window.FormData || !window.XMLHttpRequest || !window.DOMParser) return;
    event.preventDefault();
    var button = form.querySelector("button[type='submit']");
    if (button) button.disabled = true;
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.getAttribute("action") || window.location.href);
    xhr.upload.addEventListener("progress", function (e) {
      var total = e.lengthComputable ? e.total : 0;
      var words = total
        ? "Sending the file: " + megabytes(e.loaded) + " of " + megabytes(total) + " (" + Math.floor((100 * e.loaded) / total) + "%)"
        : "Sending the file: " + megabytes(e.loaded);
      show(form, e.loaded, total, words);
    });
    xhr.upload.addEventListener("load", function () {
      show(form, 1, 1, "Sent; checking the file and queueing its import…");
    });
    xhr.addEventListener("load", function () {
      var uploadPage = new URL(form.getAttribute("action") || window.location.href, window.location.href);
      var landed = xhr.responseURL ? new URL(xhr.responseURL) : null;
      if (xhr.status === 200 && landed && landed.pathname !== uploadPage.pathname) {
        window.location.assign(xhr.responseURL); // the job page
        return;
      }
      if (xhr.status === 400 && replaceForm(form, xhr.responseText)) return;
      if (button) button.disabled = false;
      show(form, 0, 0, "The upload was refused (HTTP " + xhr.status + "); nothing was imported. Try again, or reload the page.");
    });
    xhr.addEventListener("error", function () {
      if (button) button.disabled = false;
      show(form, 0, 0, "The upload did not reach the server (the connection failed); nothing was imported. Try again.");
    });
    show(form, 0, 0, "Sending the file…");
    xhr.send(new FormData(form));
  });
})();
