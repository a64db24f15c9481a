// The MCP client's side of OAuth, as a native app does it: an
// OAuthClientProvider for the official TypeScript SDK that keeps
// everything in memory, and a loopback HTTP listener that receives the
// authorization code (RFC 8252 §7.3).
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";

// startCallbackListener listens on 127.0.0.1 on a free port. It resolves
// `code` with the first request to /callback that carries a code or an
// error, answers the browser with a small page, and ignores the rest.
export async function startCallbackListener() {
  let settle;
  const code = new Promise((resolve, reject) => {
    settle = { resolve, reject };
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    if (url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    const params = Object.fromEntries(url.searchParams);
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(`<!doctype html><title>Signed in</title><h1 id="done">${params.code ? "Signed in" : "Sign-in failed"}</h1><p>You can close this window.</p>`);
    settle.resolve(params);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    redirectUrl: `http://127.0.0.1:${port}/callback`,
    params: code,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// MemoryOAuthProvider is an OAuthClientProvider that registers itself
// dynamically (DCR) as a public client and hands the authorization URL to
// whoever awaits `authorizationUrl` (the browser driver).
export class MemoryOAuthProvider {
  constructor(redirectUrl, clientName) {
    this._redirectUrl = redirectUrl;
    this._clientName = clientName;
    this._state = randomBytes(16).toString("hex");
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this.authorizationUrl = new Promise((resolve) => {
      this._gotURL = resolve;
    });
  }

  get redirectUrl() {
    return this._redirectUrl;
  }

  get clientMetadata() {
    return {
      client_name: this._clientName,
      redirect_uris: [this._redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state() {
    return this._state;
  }

  // checkState throws unless the callback's state is the one sent.
  checkState(state) {
    if (state !== this._state) {
      throw new Error(`the callback's state ${JSON.stringify(state)} is not the one the client sent`);
    }
  }

  clientInformation() {
    return this._client;
  }

  saveClientInformation(info) {
    this._client = info;
  }

  tokens() {
    return this._tokens;
  }

  saveTokens(tokens) {
    this._tokens = tokens;
  }

  redirectToAuthorization(url) {
    this._gotURL(url);
  }

  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }

  codeVerifier() {
    if (!this._verifier) throw new Error("no PKCE code verifier was saved");
    return this._verifier;
  }
}
