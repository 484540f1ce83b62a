/**
 * What the approval pages add to the connect pages' rules (api/connect/pages/styles.ts): room
 * for a request's JSON, a list of facts and a form with two buttons. Branding still enters
 * only through the custom properties of theme.ts.
 */
export const APPROVAL_CSS = `
main.wide{max-width:680px}
.review{text-align:left}
.review .brand{justify-content:flex-start}
.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:8px 18px;margin:24px 0 0;padding:16px 18px;border:1px solid var(--border);border-radius:var(--radius);background:var(--tile);font-size:14px}
.facts dt{color:var(--subtle);font-weight:600}
.facts dd{margin:0;overflow-wrap:anywhere}
.facts .rule{display:block;margin-top:2px;color:var(--muted)}
.part{margin-top:28px}
.part h3{margin:16px 0 8px;font-size:13px;font-weight:600;color:var(--muted)}
.line{font-size:14px;overflow-wrap:anywhere}
pre{margin:0;padding:14px 16px;max-height:480px;overflow:auto;border:1px solid var(--border);border-radius:var(--radius);background:var(--tile);font-size:12.5px;line-height:1.55;white-space:pre;tab-size:2}
pre code,.line code{padding:0;background:none;color:var(--text);font-size:inherit;overflow-wrap:normal}
.line code{overflow-wrap:anywhere}
.headers{width:100%;border-collapse:collapse;font-size:13px}
.headers th,.headers td{padding:6px 10px;border-bottom:1px solid var(--border);text-align:left;vertical-align:top;overflow-wrap:anywhere}
.headers th{width:36%;font-weight:600;color:var(--muted)}
.measure{margin-bottom:8px;font-size:13px;color:var(--subtle);overflow-wrap:anywhere}
.none{font-size:14px;color:var(--subtle)}
.grant{display:grid;gap:8px;margin:28px 0 0;padding:14px 16px;border:1px solid var(--border);border-radius:var(--radius);font-size:14px;overflow-wrap:anywhere}
.grant legend{padding:0 6px;font-weight:600;color:var(--muted)}
.grant select{font:inherit}
.actions{display:flex;gap:12px;margin-top:32px}
.actions button{flex:1;margin:0;border:0;font:inherit;font-weight:600;cursor:pointer}
.actions .reject{background:transparent;color:var(--danger);border:1px solid var(--border)}
.actions .reject.chosen{background:var(--danger);color:#fff;border:0}
.actions .other:not(.reject){background:transparent;color:var(--text);border:1px solid var(--border)}
.chosen-line{margin:28px 0 0;font-size:14px}
.notice{display:flex;gap:10px;align-items:flex-start;margin-top:28px;padding:14px 16px;border-radius:var(--radius);background:var(--danger-soft);font-size:14px;overflow-wrap:anywhere}
.notice svg{flex:none;margin-top:2px;color:var(--danger)}
@media (max-width:480px){.facts{grid-template-columns:minmax(0,1fr)}.facts dd{margin-bottom:6px}.actions{flex-direction:column}}
`
  .trim()
  .replace(/\n/g, '');
