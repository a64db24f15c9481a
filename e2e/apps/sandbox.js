// The sandbox proxy (the outer iframe, on its own origin): it loads the
// view's HTML into an inner iframe of the same origin, so the CSP header
// this page was served with (built from the view's declared policy) holds
// for the view too, and relays every message between the host page and
// the view but its own two (sandbox-proxy-ready, sandbox-resource-ready).
"use strict";
const host = new URL(document.referrer).origin;
const inner = document.createElement("iframe");
inner.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
inner.style.cssText = "width:100%;height:100%;border:0";
document.body.append(inner);

window.addEventListener("message", (event) => {
  if (event.source === window.parent) {
    if (event.origin !== host) return;
    const m = event.data;
    if (m && m.method === "ui/notifications/sandbox-resource-ready") {
      const doc = inner.contentDocument;
      doc.open();
      doc.write(m.params.html);
      doc.close();
      return;
    }
    inner.contentWindow.postMessage(m, "*");
  } else if (event.source === inner.contentWindow) {
    window.parent.postMessage(event.data, host);
  }
});
window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, host);
