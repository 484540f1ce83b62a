/**
 * Builds the RFC 822 (RFC 5322 + MIME) message Gmail takes as `raw`, base64url-encoded. Workflow
 * code has no Buffer: bytes come from TextEncoder and base64 from btoa.
 */

export interface PlainMessage {
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject: string;
  body: string;
  /** Message-ID of the message replied to, angle brackets included. */
  inReplyTo?: string;
}

const utf8 = new TextEncoder();

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function base64url(text: string): string {
  return base64(utf8.encode(text)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

// RFC 2047 caps an encoded word at 75 characters: 45 bytes make 60 base64 characters, plus the
// 12 of `=?UTF-8?B?` and `?=`. Words split between characters, never inside one.
const WORD_BYTES = 45;

/** A header value as is when it is ASCII, else as UTF-8 encoded words on folded lines. */
export function encodeHeader(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  const words: number[][] = [];
  const chunk: number[] = [];
  for (const char of value) {
    const bytes = utf8.encode(char);
    if (chunk.length + bytes.length > WORD_BYTES) {
      words.push(chunk.splice(0));
    }
    chunk.push(...bytes);
  }
  if (chunk.length > 0) words.push(chunk);
  return words.map((word) => `=?UTF-8?B?${base64(Uint8Array.from(word))}?=`).join('\r\n ');
}

/** The body as base64 in lines of 76, so no line exceeds the limit whatever the text. */
function encodeBody(body: string): string {
  const encoded = base64(utf8.encode(body.replace(/\r?\n/g, '\r\n')));
  return encoded.match(/.{1,76}/g)?.join('\r\n') ?? '';
}

/** The whole message, base64url-encoded as Gmail's `raw` field wants it. */
export function rawMessage(message: PlainMessage): string {
  const headers = [
    `To: ${message.to.join(', ')}`,
    message.cc?.length ? `Cc: ${message.cc.join(', ')}` : undefined,
    message.bcc?.length ? `Bcc: ${message.bcc.join(', ')}` : undefined,
    `Subject: ${encodeHeader(message.subject)}`,
    message.inReplyTo ? `In-Reply-To: ${message.inReplyTo}` : undefined,
    message.inReplyTo ? `References: ${message.inReplyTo}` : undefined,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset="UTF-8"',
    'Content-Transfer-Encoding: base64',
  ].filter((header) => header !== undefined);
  return base64url(`${headers.join('\r\n')}\r\n\r\n${encodeBody(message.body)}\r\n`);
}
