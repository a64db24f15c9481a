// The emulator's stand-in for Google's Picker script (apis.google.com/js/api.js):
// gapi.load and the google.picker namespace with Google's names and values.
// The dialog is the emulator's /picker page in an iframe; its answer comes
// back by postMessage from the emulator's origin and reaches the callback
// as Google's ResponseObject.
(function () {
  "use strict";
  var ORIGIN = __ORIGIN__;

  var gapi = window.gapi = window.gapi || {};
  gapi.load = function (names, done) {
    var cb = typeof done === "function" ? done : done && done.callback;
    setTimeout(function () { if (cb) cb(); }, 0);
  };

  var picker = {
    ViewId: { DOCS: "all", DOCS_IMAGES: "docs-images", DOCS_IMAGES_AND_VIDEOS: "docs-images-and-videos",
      DOCS_VIDEOS: "docs-videos", DOCUMENTS: "documents", DRAWINGS: "drawings", FOLDERS: "folders",
      FORMS: "forms", PDFS: "pdfs", PRESENTATIONS: "presentations", SPREADSHEETS: "spreadsheets" },
    Feature: { MINE_ONLY: "mineOnly", MULTISELECT_ENABLED: "multiselectEnabled", NAV_HIDDEN: "navHidden",
      SIMPLE_UPLOAD_ENABLED: "simpleUploadEnabled", SUPPORT_DRIVES: "sdr" },
    Action: { CANCEL: "cancel", PICKED: "picked", ERROR: "error", LOADED: "loaded" },
    Response: { ACTION: "action", DOCUMENTS: "docs", PARENTS: "parents", VIEW: "viewToken" },
    Document: { ADDRESS_LINES: "addressLines", AUDIENCE: "audience", DESCRIPTION: "description", DURATION: "duration",
      EMBEDDABLE_URL: "embedUrl", ICON_URL: "iconUrl", ID: "id", IS_NEW: "isNew", LAST_EDITED_UTC: "lastEditedUtc",
      LATITUDE: "latitude", LONGITUDE: "longitude", MIME_TYPE: "mimeType", NAME: "name", NUM_CHILDREN: "numChildren",
      PARENT_ID: "parentId", PHONE_NUMBERS: "phoneNumbers", SERVICE_ID: "serviceId", THUMBNAILS: "thumbnails",
      TYPE: "type", URL: "url" },
    DocsViewMode: { GRID: "grid", LIST: "list" },
    ServiceId: { DOCS: "docs", MAPS: "maps", PHOTOS: "picasa", SEARCH_API: "search-api", URL: "url", YOUTUBE: "youtube" },
    Thumbnail: { HEIGHT: "height", WIDTH: "width", URL: "url" },
    Type: { DOCUMENT: "document", LOCATION: "location", PHOTO: "photo", URL: "url", VIDEO: "video" }
  };

  // MIME types a view id shows; absent: every type.
  var VIEW_TYPES = {
    "documents": ["application/vnd.google-apps.document"],
    "spreadsheets": ["application/vnd.google-apps.spreadsheet"],
    "presentations": ["application/vnd.google-apps.presentation"],
    "drawings": ["application/vnd.google-apps.drawing"],
    "forms": ["application/vnd.google-apps.form"],
    "pdfs": ["application/pdf"],
    "folders": ["application/vnd.google-apps.folder"]
  };

  function chain(proto, name, key) {
    proto[name] = function (v) { this[key] = v === undefined ? true : v; return this; };
  }

  function DocsView(viewId) { this.viewId = viewId || picker.ViewId.DOCS; }
  ["setIncludeFolders:includeFolders", "setSelectFolderEnabled:selectFolder", "setMode:mode",
    "setOwnedByMe:ownedByMe", "setParent:parent", "setStarred:starred", "setEnableDrives:enableDrives",
    "setMimeTypes:mimeTypes", "setQuery:query", "setFileIds:fileIds"].forEach(function (p) {
    var s = p.split(":"); chain(DocsView.prototype, s[0], s[1]);
  });
  DocsView.prototype.getId = function () { return this.viewId; };
  function DocsUploadView() { DocsView.call(this, "upload"); }
  DocsUploadView.prototype = Object.create(DocsView.prototype);
  function View(viewId) { DocsView.call(this, viewId); }
  View.prototype = Object.create(DocsView.prototype);
  function ViewGroup(v) { this.views = [v]; }
  ViewGroup.prototype.addView = function (v) { this.views.push(v); return this; };
  ViewGroup.prototype.addLabel = function () { return this; };
  ViewGroup.prototype.addViewGroup = function (g) { this.views = this.views.concat(g.views); return this; };

  function PickerBuilder() { this.cfg = { views: [], features: {}, maxItems: 0, title: "Select a file" }; }
  var B = PickerBuilder.prototype;
  ["setOAuthToken:token", "setDeveloperKey:key", "setAppId:appId", "setOrigin:origin", "setTitle:title",
    "setLocale:locale", "setRelayUrl:relayUrl", "setSelectableMimeTypes:selectable", "setMaxItems:maxItems",
    "setCallback:callback", "setDocument:document"].forEach(function (p) {
    var s = p.split(":");
    B[s[0]] = function (v) { this.cfg[s[1]] = v; return this; };
  });
  B.setSize = function (w, h) { this.cfg.size = [w, h]; return this; };
  B.hideTitleBar = function () { this.cfg.title = ""; return this; };
  B.addView = function (v) { this.cfg.views.push(typeof v === "string" ? new DocsView(v) : v); return this; };
  B.addViewGroup = function (g) { this.cfg.views = this.cfg.views.concat(g.views); return this; };
  B.enableFeature = function (f) { this.cfg.features[f] = true; return this; };
  B.disableFeature = function (f) { delete this.cfg.features[f]; return this; };
  B.isFeatureEnabled = function (f) { return !!this.cfg.features[f]; };
  B.getTitle = function () { return this.cfg.title; };
  B.toUri = function () { return ORIGIN + "/picker"; };
  B.build = function () { return new Picker(this.cfg); };

  function Picker(cfg) { this.cfg = cfg; this.visible = false; this.nonce = Math.random().toString(36).slice(2); }
  Picker.prototype.setCallback = function (fn) { this.cfg.callback = fn; return this; };
  Picker.prototype.setRelayUrl = function () { return this; };
  Picker.prototype.isVisible = function () { return this.visible; };
  Picker.prototype.dispose = function () { this.setVisible(false); };
  Picker.prototype.setVisible = function (show) {
    if (!show) {
      if (this.overlay) { this.overlay.remove(); this.overlay = null; }
      if (this.listener) { window.removeEventListener("message", this.listener); this.listener = null; }
      this.visible = false;
      return this;
    }
    if (this.visible) return this;
    this.visible = true;
    var self = this, cfg = this.cfg, name = "emulator-picker-" + this.nonce;
    var overlay = document.createElement("div");
    overlay.id = "emulator-picker";
    overlay.style.cssText = "position:fixed;inset:0;background:rgba(0,0,0,.4);z-index:2147483647;display:flex;align-items:center;justify-content:center";
    var frame = document.createElement("iframe");
    frame.name = name;
    frame.title = cfg.title || "Google Picker";
    var size = cfg.size || [820, 520];
    frame.style.cssText = "width:" + size[0] + "px;height:" + size[1] + "px;border:0;background:#fff";
    overlay.appendChild(frame);
    var form = document.createElement("form");
    form.method = "POST"; form.action = ORIGIN + "/picker"; form.target = name; form.style.display = "none";
    var types = [];
    cfg.views.forEach(function (v) {
      var t = v.mimeTypes ? v.mimeTypes.split(",") : VIEW_TYPES[v.viewId] || [];
      types = types.concat(t);
    });
    if (cfg.selectable) types = types.concat(cfg.selectable.split(","));
    var fields = {
      oauth_token: cfg.token || "", developer_key: cfg.key || "", app_id: cfg.appId || "",
      origin: cfg.origin || window.location.origin, nonce: this.nonce, title: cfg.title || "",
      multiselect: cfg.features.multiselectEnabled ? "true" : "", max_items: cfg.maxItems || "",
      mine_only: cfg.features.mineOnly ? "true" : "",
      sdr: cfg.features.sdr || cfg.views.some(function (v) { return v.enableDrives; }) ? "true" : "",
      include_folders: cfg.views.some(function (v) { return v.includeFolders || v.selectFolder; }) ? "true" : "",
      mime_types: types.map(function (t) { return t.trim(); }).filter(Boolean).join(",")
    };
    Object.keys(fields).forEach(function (k) {
      var input = document.createElement("input");
      input.type = "hidden"; input.name = k; input.value = fields[k];
      form.appendChild(input);
    });
    overlay.appendChild(form);
    this.listener = function (e) {
      if (e.origin !== ORIGIN || !e.data || e.data.nonce !== self.nonce) return;
      var res = e.data.result || {};
      if (res.action !== picker.Action.LOADED && res.action !== picker.Action.ERROR) self.setVisible(false);
      if (cfg.callback) cfg.callback(res);
    };
    window.addEventListener("message", this.listener);
    document.body.appendChild(overlay);
    this.overlay = overlay;
    form.submit();
    return this;
  };

  picker.PickerBuilder = PickerBuilder;
  picker.DocsView = DocsView;
  picker.DocsUploadView = DocsUploadView;
  picker.View = View;
  picker.ViewGroup = ViewGroup;
  picker.Picker = Picker;
  window.google = window.google || {};
  window.google.picker = picker;
})();
