// brain console: live timeline. The page reads without this file; with
// it, a session's new events appear as they are committed. Entries arrive
// as HTML the server rendered with the page's own templates (escaped the
// same way), over the console's server-sent events stream. While a turn
// runs, the text the model is writing arrives as "delta" events and is
// shown as a provisional message (set as text, never parsed as HTML) until
// the committed agent.message replaces it.
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
  // Provisional messages, oldest first, one per model round with text.
  // Rounds run one after another, so the next committed agent.message is
  // the oldest one's.
  var provisional = [];
  function dropProvisional(all) {
    while (provisional.length > 0) {
      provisional.shift().li.remove();
      if (!all) {
        return;
      }
    }
  }
  function provisionalFor(turn, round) {
    var last = provisional[provisional.length - 1];
    if (last && last.turn === turn && last.round === round) {
      return last;
    }
    var li = document.createElement("li");
    li.className = "item kind-agent is-provisional";
    var meta = document.createElement("div");
    meta.className = "meta";
    var what = document.createElement("span");
    what.className = "what";
    what.textContent = "agent";
    var writing = document.createElement("span");
    writing.textContent = "writing…";
    meta.append(what, " ", writing);
    var text = document.createElement("p");
    text.className = "streamed";
    var md = document.createElement("div");
    md.className = "md";
    md.appendChild(text);
    li.append(meta, md);
    timeline.appendChild(li);
    var p = {turn: turn, round: round, li: li, text: text};
    provisional.push(p);
    return p;
  }
  source.addEventListener("delta", function (e) {
    var d;
    try {
      d = JSON.parse(e.data);
    } catch (err) {
      return;
    }
    if (typeof d.text !== "string") {
      return;
    }
    var follow = nearBottom();
    var p = provisionalFor(d.turn, d.round);
    p.text.textContent += d.text;
    if (follow) {
      p.li.scrollIntoView({block: "end"});
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
    if (li.classList.contains("kind-agent")) {
      dropProvisional(false);
    }
    timeline.appendChild(li);
    if (follow) {
      li.scrollIntoView({block: "end"});
    }
  });
  // The trace view: a turn (or an event outside turns) arrives whole each
  // time it changes and replaces the one on the page with its id.
  source.addEventListener("entry", function (e) {
    var follow = nearBottom();
    var tpl = document.createElement("template");
    tpl.innerHTML = e.data;
    var li = tpl.content.firstElementChild;
    if (!li || !li.id) {
      return;
    }
    var old = document.getElementById(li.id);
    var before = old ? old.querySelectorAll(".kind-agent").length : 0;
    for (var n = li.querySelectorAll(".kind-agent").length - before; n > 0; n--) {
      dropProvisional(false);
    }
    if (old) {
      var was = old.querySelector("details.turn-box");
      var now = li.querySelector("details.turn-box");
      if (was && now) {
        now.open = was.open || now.open; // keep what the reader opened
      }
      old.replaceWith(li);
    } else {
      timeline.appendChild(li);
    }
    if (follow) {
      li.scrollIntoView({block: "end"});
    }
  });
  // The header (status, usage, last activity, the actions a turn allows)
  // arrives again when it changes.
  source.addEventListener("header", function (e) {
    var tpl = document.createElement("template");
    tpl.innerHTML = e.data;
    var next = tpl.content.firstElementChild;
    var cur = document.getElementById("session-header");
    if (next && cur && next.id === "session-header") {
      cur.replaceWith(next);
    }
  });
  source.addEventListener("status", function (e) {
    if (e.data !== "running") {
      dropProvisional(true); // the turn ended: what was not committed is gone
    }
    var el = document.getElementById("session-status");
    if (el) {
      var pill = document.createElement("span");
      pill.className = "pill status-" + e.data;
      pill.textContent = e.data;
      el.replaceChildren(pill);
    }
  });
  source.addEventListener("error", function () {
    dropProvisional(true); // deltas are not replayed: the text would have a gap
    if (note && source.readyState === EventSource.CLOSED) {
      note.textContent = "Live updates stopped; reload the page.";
      note.className = "live-note";
    }
  });
})();
