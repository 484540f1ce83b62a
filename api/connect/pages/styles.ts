/**
 * The static rules of every connect page. Pages are served under a CSP without external
 * sources and must render offline, so everything is inline and the fonts are system fonts.
 * Branding enters only through the custom properties set in theme.ts. Dates, ids and names
 * (`time`, `.keep`) are kept whole on one line where they fit: a hyphen is a line-break
 * opportunity, and "2026-/11-25" or "demo-/agent" reads as two words. Longer than a line, they
 * still wrap inside themselves rather than overflow.
 */
export const BASE_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:40px 16px;background:var(--page);color:var(--text);font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;font-size:15px;line-height:1.5;-webkit-font-smoothing:antialiased}
main{width:100%;max-width:440px}
.card{background:var(--card);border:1px solid var(--border);border-radius:calc(var(--radius) + 6px);box-shadow:var(--shadow);padding:36px 32px 28px;text-align:center}
time,.keep{display:inline-block;max-width:100%}
h1{margin:0 0 8px;font-size:22px;line-height:1.3;font-weight:650;letter-spacing:-.01em;text-wrap:balance;overflow-wrap:anywhere}
h2{margin:0 0 12px;font-size:12px;line-height:1.4;font-weight:600;letter-spacing:.06em;text-transform:uppercase;color:var(--subtle)}
p{margin:0}
.lead{color:var(--muted);text-wrap:pretty;overflow-wrap:anywhere}
a{color:var(--accent-text);text-underline-offset:2px}
a:hover{text-decoration-thickness:2px}
a:focus-visible{outline:2px solid var(--accent-text);outline-offset:3px;border-radius:2px}
.button{display:block;margin-top:28px;padding:12px 18px;border-radius:var(--radius);background:var(--accent);color:var(--accent-fg);font-weight:600;text-decoration:none;overflow-wrap:anywhere;transition:filter .15s ease}
.button:hover{filter:brightness(1.08)}
.button:active{filter:brightness(.95)}
.button:focus-visible{border-radius:var(--radius)}
.button[aria-disabled="true"]{opacity:.55;cursor:not-allowed}
.pair{display:flex;align-items:center;justify-content:center;margin-bottom:24px}
.tile{width:60px;height:60px;flex:none;display:grid;place-items:center;border-radius:calc(var(--radius) + 4px);font-size:24px;font-weight:650;overflow:hidden}
.tile-brand{background:var(--accent);color:var(--accent-fg)}
.tile-logo{width:auto;min-width:60px;max-width:176px;padding:10px;background:#ffffff;border:1px solid var(--border)}
.tile-logo img{display:block;height:40px;width:auto;max-width:100%;object-fit:contain}
.tile-app{background:var(--tile);color:var(--text);border:1px solid var(--border)}
.connector{display:flex;align-items:center;gap:6px;padding:0 10px;color:var(--subtle)}
.connector i{display:block;width:14px;border-top:2px dotted var(--border)}
.user{margin-top:14px;font-size:13px;color:var(--subtle);overflow-wrap:anywhere}
.user strong{color:var(--text);font-weight:600}
.perms{margin-top:24px;padding:16px 18px;border:1px solid var(--border);border-radius:var(--radius);background:var(--tile);text-align:left}
.perms ul{list-style:none;margin:0;padding:0;display:grid;gap:10px}
.perms li{display:flex;gap:10px;align-items:flex-start;font-size:14px;overflow-wrap:anywhere;min-width:0}
.perms svg{flex:none;margin-top:3px;color:var(--success)}
.fine{margin-top:16px;font-size:12.5px;line-height:1.45;color:var(--subtle)}
.fine svg{vertical-align:-2px;margin-right:4px}
.brand{display:flex;align-items:center;justify-content:center;gap:10px;margin-bottom:28px;font-weight:600;font-size:15px;overflow-wrap:anywhere}
.logo{display:inline-flex;padding:6px 10px;border-radius:calc(var(--radius) * .6);background:var(--logo-plate)}
.logo img{display:block;max-height:32px;max-width:180px}
.mono{width:28px;height:28px;flex:none;display:grid;place-items:center;border-radius:calc(var(--radius) * .6);background:var(--accent);color:var(--accent-fg);font-size:14px;font-weight:650}
.status{width:60px;height:60px;display:grid;place-items:center;margin:0 auto 20px;border-radius:50%}
.status-success{background:var(--success-soft);color:var(--success)}
.status-error{background:var(--danger-soft);color:var(--danger)}
.eyebrow{margin-bottom:6px;font-size:13px;font-weight:600;color:var(--subtle);overflow-wrap:anywhere}
.close{margin-top:24px;font-size:14px;color:var(--subtle)}
.code{margin-top:24px;font-size:12px;color:var(--subtle)}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12px;padding:2px 6px;border-radius:5px;background:var(--tile);color:var(--muted);overflow-wrap:anywhere}
.help{margin-top:20px;text-align:center;font-size:13px;color:var(--subtle)}
@media (max-width:480px){body{padding:24px 12px}.card{padding:28px 20px 22px}}
@media (prefers-reduced-motion:reduce){.button{transition:none}}
`
  .trim()
  .replace(/\n/g, '');
