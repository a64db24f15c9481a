// The host page's script, bundled for the browser by e2e/apps/run (esbuild):
// a minimal MCP Apps host built on the ext-apps SDK's AppBridge, as its
// reference host (examples/basic-host) is. It renders one view in a
// sandbox proxy on another origin (the double iframe web hosts use), with
// the view's declared policy applied as the proxy page's CSP header; hands
// the view the tool's input and result; and passes the view's tools/call
// to the suite (POST /rpc on this page's origin), which forwards it to
// drivemail with the signed-in user's token. Like a real host it lets a
// view call only the tools whose visibility includes "app". Everything the
// bridge does is logged with a [HOST] prefix, for the suite to read.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const log = (...a) => console.log("[HOST]", ...a);

// startView renders a view: { html, csp, sandboxOrigin, tools (the
// tools/list entries), input, result, theme }. It resolves once the view
// has the tool's result.
window.startView = async ({ html, csp, sandboxOrigin, tools, input, result, theme }) => {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const iframe = document.createElement("iframe");
  iframe.id = "view";
  iframe.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  document.getElementById("frame").append(iframe);
  const ready = new Promise((resolve) => {
    const listener = ({ source, data }) => {
      if (source === iframe.contentWindow && data?.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", listener);
        resolve();
      }
    };
    window.addEventListener("message", listener);
  });
  const url = new URL("/sandbox.html", sandboxOrigin);
  url.searchParams.set("csp", JSON.stringify(csp || {}));
  iframe.src = url.href;
  await ready;
  log("sandbox proxy ready");

  const bridge = new AppBridge(
    null,
    { name: "drivemail e2e host", version: "1.0.0" },
    { openLinks: {}, serverTools: {}, logging: {} },
    {
      hostContext: {
        theme,
        displayMode: "inline",
        platform: "web",
        containerDimensions: { maxHeight: 2000 },
        styles: { variables: { "--color-background-primary": theme === "dark" ? "#16161a" : "#ffffff" } },
      },
    },
  );
  bridge.oncalltool = async (params) => {
    const tool = byName.get(params.name);
    const visibility = tool?._meta?.ui?.visibility ?? ["model", "app"];
    if (!tool || !visibility.includes("app")) {
      log("refused a view's call of", params.name);
      throw new Error(`the view may not call ${params.name}`);
    }
    log("view calls", params.name, JSON.stringify(params.arguments));
    const r = await fetch("/rpc", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(params) });
    const out = await r.json();
    log("result of", params.name, JSON.stringify(out).slice(0, 400));
    window.viewCalls.push({ name: params.name, arguments: params.arguments, result: out });
    return out;
  };
  bridge.onopenlink = async ({ url }) => {
    log("open link", url);
    window.openedLinks.push(url);
    return {};
  };
  bridge.onupdatemodelcontext = async (params) => {
    log("model context", JSON.stringify(params).slice(0, 400));
    window.modelContext.push(params);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${height}px`;
  };
  bridge.onloggingmessage = (p) => log("view log", JSON.stringify(p));
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await bridge.sendSandboxResourceReady({ html, csp });
  await initialized;
  log("view initialized");
  await bridge.sendToolInput({ arguments: input });
  await bridge.sendToolResult(result);
  log("tool result sent");
};

window.viewCalls = [];
window.openedLinks = [];
window.modelContext = [];
