// The pick page's script: it opens Google's Picker with the settings in
// the page's #config block, and posts the ids the user picks (nothing
// else of the Picker's answer) to this page's own URL, then shows what
// drivemail answered. It runs under the page's CSP: this script by
// nonce, the Picker's origins, and fetch to drivemail alone.
(function () {
  "use strict";
  var cfg = JSON.parse(document.getElementById("config").textContent);
  var status = document.getElementById("status");
  var again = document.getElementById("again");
  var list = document.getElementById("files");

  function say(text, problem) {
    status.textContent = text;
    status.className = problem ? "problem" : "";
  }

  function open() {
    var P = google.picker;
    var view = new P.DocsView(P.ViewId.DOCS).setIncludeFolders(false).setSelectFolderEnabled(false).setMode(P.DocsViewMode.LIST);
    new P.PickerBuilder()
      .setOAuthToken(cfg.token)
      .setDeveloperKey(cfg.apiKey)
      .setAppId(cfg.appId)
      .addView(view)
      .enableFeature(P.Feature.MULTISELECT_ENABLED)
      .enableFeature(P.Feature.SUPPORT_DRIVES)
      .setMaxItems(cfg.maxFiles)
      .setTitle("Choose files for drivemail")
      .setCallback(picked)
      .build()
      .setVisible(true);
    say("Choose your files in Google's file picker.");
  }

  function picked(res) {
    var P = google.picker;
    if (res.action === P.Action.PICKED) {
      send(res.docs || []);
    } else if (res.action === P.Action.CANCEL) {
      say("Nothing was chosen.");
      again.hidden = false;
    } else if (res.action === P.Action.ERROR) {
      say("Google's file picker failed. Try again, or ask your assistant for a new link.", true);
      again.hidden = false;
    }
  }

  function send(docs) {
    say("Handing your choice to drivemail…");
    var files = docs.map(function (d) { return { id: d.id, resource_key: d.resourceKey || "" }; });
    fetch(window.location.pathname, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      credentials: "omit",
      body: JSON.stringify({ page_key: cfg.pageKey, files: files })
    }).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body }; });
    }).then(function (res) {
      if (!res.ok) {
        say(res.body.error, true);
        again.hidden = !res.body.retry;
        return;
      }
      list.textContent = "";
      res.body.files.forEach(function (f) {
        var li = document.createElement("li");
        li.textContent = f.name;
        li.dataset.id = f.id;
        list.appendChild(li);
      });
      say(res.body.say, res.body.files.length === 0);
      document.getElementById("hint").hidden = true;
      document.body.dataset.done = "true";
    }).catch(function () {
      say("drivemail could not be reached. Check your connection and try again.", true);
      again.hidden = false;
    });
  }

  again.addEventListener("click", function () {
    again.hidden = true;
    open();
  });
  gapi.load("picker", { callback: open });
})();
