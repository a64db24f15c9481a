// The view's side of MCP Apps: JSON-RPC 2.0 over postMessage with the
// host that renders this document (the extension io.modelcontextprotocol/ui,
// revision 2026-01-26). It is small on purpose: ui/initialize and its
// initialized notification, the host's notifications (tool input, tool
// result, cancellation, context changes), its requests (teardown, ping),
// and the view's requests (tools/call, ui/open-link, ui/update-model-context)
// and size notifications. Only the window that embeds this document is
// listened to.
"use strict";

const bridge = (() => {
  const PROTOCOL = "2026-01-26";
  const pending = new Map();
  const handlers = new Map();
  let nextId = 1;
  let hostContext = {};
  let hostCapabilities = {};

  function post(message) {
    // The view cannot know the host's origin (hosts serve views from
    // origins of their own); what it sends is the host's to see anyway.
    window.parent.postMessage(message, "*");
  }

  function request(method, params, timeoutMs) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      let timer;
      if (timeoutMs) {
        timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(method + ": the host did not answer"));
        }, timeoutMs);
      }
      pending.set(id, {
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      post({ jsonrpc: "2.0", id, method, params: params || {} });
    });
  }

  function notify(method, params) {
    post({ jsonrpc: "2.0", method, params: params || {} });
  }

  function answer(id, result, error) {
    const m = { jsonrpc: "2.0", id };
    if (error) m.error = error; else m.result = result || {};
    post(m);
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (typeof m.method !== "string") {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error) p.reject(new Error(String(m.error.message || "the host refused")));
      else p.resolve(m.result || {});
      return;
    }
    const handler = handlers.get(m.method);
    if (m.id === undefined || m.id === null) {
      if (handler) handler(m.params || {});
      return;
    }
    if (m.method === "ping") { answer(m.id, {}); return; }
    if (!handler) { answer(m.id, null, { code: -32601, message: "not handled by this view: " + m.method }); return; }
    Promise.resolve().then(() => handler(m.params || {})).then(
      (r) => answer(m.id, r),
      (e) => answer(m.id, null, { code: -32000, message: String(e && e.message || e) }));
  });

  // The host's theme: light or dark, and the CSS variables it names
  // (only custom properties, set through the CSSOM: never markup).
  function applyContext(ctx) {
    if (!ctx || typeof ctx !== "object") return;
    hostContext = Object.assign({}, hostContext, ctx);
    const root = document.documentElement;
    if (ctx.theme === "light" || ctx.theme === "dark") {
      root.dataset.theme = ctx.theme;
      root.style.colorScheme = ctx.theme;
    }
    const vars = ctx.styles && ctx.styles.variables;
    if (vars && typeof vars === "object") {
      for (const [name, value] of Object.entries(vars)) {
        if (/^--[a-z0-9-]+$/.test(name) && typeof value === "string") root.style.setProperty(name, value);
      }
    }
  }

  // The view's height follows its content, as the host asks of a view
  // whose container is not fixed.
  function watchSize() {
    let last = "";
    let queued = false;
    const send = () => {
      queued = false;
      // The content's own box: scrollHeight would never be less than the
      // frame the host gave, so the view could grow but never shrink.
      const box = document.documentElement.getBoundingClientRect();
      const size = { width: Math.ceil(box.width), height: Math.ceil(box.height) };
      const key = size.width + "x" + size.height;
      if (key === last) return;
      last = key;
      notify("ui/notifications/size-changed", size);
    };
    new ResizeObserver(() => {
      if (!queued) { queued = true; requestAnimationFrame(send); }
    }).observe(document.body);
  }

  handlers.set("ui/notifications/host-context-changed", applyContext);
  handlers.set("ui/resource-teardown", () => ({}));

  return {
    // on registers the handler of one host notification or request.
    on(method, fn) { handlers.set(method, fn); },
    // connect performs the handshake; the host sends nothing before it.
    async connect(appName) {
      const res = await request("ui/initialize", {
        appInfo: { name: appName, version: "1" },
        appCapabilities: { availableDisplayModes: ["inline"] },
        protocolVersion: PROTOCOL,
      }, 10000);
      hostCapabilities = res.hostCapabilities || {};
      applyContext(res.hostContext);
      notify("ui/notifications/initialized", {});
      watchSize();
      return res;
    },
    // callTool calls a tool of this view's server through the host; a
    // send may take minutes, so there is no timeout here.
    callTool(name, args) { return request("tools/call", { name, arguments: args }); },
    openLink(url) { return request("ui/open-link", { url }, 10000); },
    // sendMessage speaks for the user in the chat, which starts the
    // model's next turn.
    sendMessage(text) {
      return request("ui/message", { role: "user", content: [{ type: "text", text }] }, 10000);
    },
    // tellModel tells the model what the user did in the view, for its
    // next turn; a host that does not take it loses nothing else.
    tellModel(text) {
      return request("ui/update-model-context", { content: [{ type: "text", text }] }, 10000).catch(() => {});
    },
    canOpenLinks() { return Boolean(hostCapabilities.openLinks); },
    context() { return hostContext; },
  };
})();

// el makes an element with text content only: every value from Drive,
// Gmail or the model reaches the page through here or an input's value,
// never as markup. A one-line value (a name, an address) shows its
// control and format characters; text keeps its line breaks.
function el(tag, className, text, multiline) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined && text !== null) e.textContent = visible(String(text), multiline);
  return e;
}

// visible shows control and format characters (a right-to-left override,
// a zero-width space, a line break in a name) as \u{…}, so that nobody's
// file name can hide or reorder what the user reads; multiline keeps
// line breaks and tabs.
function visible(s, multiline) {
  return s.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, (c) =>
    multiline && (c === "\n" || c === "\r" || c === "\t") ? c : "\\u{" + c.codePointAt(0).toString(16) + "}");
}

// humanBytes writes a size as drivemail's text results do.
function humanBytes(n) {
  if (n < 1024) return n + " B";
  const units = "KMGTPE";
  let i = -1;
  let v = n;
  do { v /= 1024; i++; } while (v >= 1024 && i < units.length - 1);
  return v.toFixed(1) + " " + units[i] + "iB";
}

// resultText is the text of a tool result (what a text-only host shows).
function resultText(result) {
  return (result && Array.isArray(result.content) ? result.content : [])
    .filter((c) => c && c.type === "text").map((c) => String(c.text)).join("\n");
}

function show(id, on) { document.getElementById(id).hidden = !on; }
