// brain console: live timeline. The page reads without this file; with
// it, a session's new events appear as they are committed. Entries arrive
// as HTML the server rendered with the page's own templates (escaped the
// same way), over the console's server-sent events stream.
(function () {
  "use strict";
  var timeline = document.getElementById("timeline");
  if (!timeline || !window.EventSource) {
    return;
  }
  var note = document.getElementById("live-note");
  var source = new EventSource(timeline.getAttribute("data-live"));
  function nearBottom() {
    return window.innerHeight + window.scrollY >= document.body.offsetHeight - 200;
  }
  source.addEventListener("open", function () {
    if (note) {
      note.textContent = "Live: new events appear as they happen.";
      note.className = "live-note is-live";
    }
  });
  source.addEventListener("item", function (e) {
    var follow = nearBottom();
    var tpl = document.createElement("template");
    tpl.innerHTML = e.data;
    var li = tpl.content.firstElementChild;
    if (!li || document.getElementById(li.id)) {
      return; // already on the page
    }
    timeline.appendChild(li);
    if (follow) {
      li.scrollIntoView({block: "end"});
    }
  });
  source.addEventListener("status", function (e) {
    var el = document.getElementById("session-status");
    if (el) {
      var pill = document.createElement("span");
      pill.className = "pill status-" + e.data;
      pill.textContent = e.data;
      el.replaceChildren(pill);
    }
  });
  source.addEventListener("error", function () {
    if (note && source.readyState === EventSource.CLOSED) {
      note.textContent = "Live updates stopped; reload the page.";
      note.className = "live-note";
    }
  });
})();
