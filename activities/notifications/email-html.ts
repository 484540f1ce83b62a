/**
 * Markup for e-mail bodies, escaped by default: the `html` tag escapes every interpolated value
 * unless it is already `EmailHtml`, so a value from an approval (an agent's input, a user id) can
 * never become markup. The console and hosted pages have the same tag in api/connect/pages/html.ts;
 * activities sit below the API and do not import from it, so the few lines are repeated here.
 */
export class EmailHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

/** `null` and `false` render nothing, so `cond && html\`…\`` reads naturally. */
export type EmailHtmlValue =
  EmailHtml | string | number | false | null | undefined | readonly EmailHtmlValue[];

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Safe in text and in quoted attribute values (both quote styles). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

function render(value: EmailHtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof EmailHtml) return value.value;
  if (typeof value === 'string' || typeof value === 'number') return escapeHtml(String(value));
  return value.map(render).join('');
}

export function html(strings: TemplateStringsArray, ...values: EmailHtmlValue[]): EmailHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new EmailHtml(out);
}
