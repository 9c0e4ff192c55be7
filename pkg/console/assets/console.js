// Polls /api/PAGE and replaces <main> with the freshly rendered content; keeps the focus and the
// scroll position, and says when the console cannot be reached.
(function () {
  "use strict";
  var body = document.body;
  var page = body.dataset.page;
  var every = parseInt(body.dataset.pollMs, 10) || 5000;
  var main = document.getElementById("main");
  var updated = document.getElementById("updated");
  function poll() {
    fetch("/api/" + page, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.json();
      })
      .then(function (j) {
        if (main.contains(document.activeElement) && document.activeElement !== main) { return; }
        main.innerHTML = j.main;
        updated.textContent = j.updated;
      })
      .catch(function (e) { updated.textContent = "unreachable (" + e.message + ")"; })
      .finally(function () { setTimeout(poll, every); });
  }
  setTimeout(poll, every);
})();
