// The viewer's token, when it has one. The printed address carries it in its fragment
// (#token=...), which no browser sends to a server; it is kept for this tab and this
// origin only (sessionStorage: scheme, host and port) and sent as a header. No cookie:
// a cookie ignores ports, so a server on another port of the host would get it.

const KEY = "viewfinder-view-token";
const KEPT = 400;  // pictures kept as blob URLs, the oldest given back first
const blobs = new Map();

// Move a #token=... of the address into this origin's storage, out of the address.
export function takeToken() {
  const match = /^#token=([^&]*)$/.exec(location.hash);
  if (!match) return;
  sessionStorage.setItem(KEY, decodeURIComponent(match[1]));
  history.replaceState(null, "", location.pathname + location.search);
}

function token() {
  return sessionStorage.getItem(KEY);
}

// Headers for a fetch of this server's API.
export function authHeaders() {
  const kept = token();
  return kept ? { Authorization: `Bearer ${kept}` } : {};
}

// Subprotocols for a WebSocket of this server (a WebSocket cannot send a header).
export function socketProtocols() {
  const kept = token();
  if (!kept) return [];
  const bytes = new TextEncoder().encode(kept);
  const base64 = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return [`viewfinder-token.${base64}`];
}

// Point ``element``'s ``attribute`` at ``url``: as it is without a token; with one, at
// the picture fetched with the header (an <img> or <video> cannot send one).
export function media(element, url, attribute = "src") {
  if (!token()) {
    element.setAttribute(attribute, url);
    return element;
  }
  let made = blobs.get(url);
  if (!made) {
    made = fetch(url, { headers: authHeaders() }).then(async (response) => {
      if (!response.ok) throw new Error(`${response.status}`);
      return URL.createObjectURL(await response.blob());
    });
    blobs.set(url, made);
    made.catch(() => blobs.delete(url));
    while (blobs.size > KEPT) {
      const [oldest, kept] = blobs.entries().next().value;
      blobs.delete(oldest);
      kept.then((blob) => URL.revokeObjectURL(blob), () => {});
    }
  }
  made.then((blob) => element.setAttribute(attribute, blob), () => element.classList.add("refused"));
  return element;
}
