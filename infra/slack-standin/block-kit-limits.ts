/**
 * Slack's documented Block Kit limits for the blocks Gatehouse's messages use, as problems with
 * the JSON path of each. The stand-in refuses a message that breaks one with `invalid_blocks`, as
 * Slack does, and the message builders' tests check their output with it, so a limit is written
 * down once.
 *
 * The numbers are those of Slack's Block Kit reference (docs.slack.dev/reference/block-kit): at
 * most 50 blocks in a message; a block_id of at most 255 characters, unique in its message; a
 * header's plain text at most 150 characters; a section's text at most 3,000 and its fields at
 * most 10 of 2,000 each; a context block's elements 1 to 10; an actions block's elements at most
 * 25; a button's label (plain text) at most 75, its action_id 255, value 2,000 and url 3,000, its
 * style `primary` or `danger`; a confirmation dialog's title 100, text 300, and button labels 30
 * each. Block types Gatehouse does not send are refused as unknown here, which Slack would not
 * do: the stand-in is for Gatehouse's messages, and a type nobody meant to send is a bug.
 */

export const MESSAGE_BLOCKS_MAX = 50;

const LIMITS = {
  blockId: 255,
  headerText: 150,
  sectionText: 3000,
  sectionFields: 10,
  sectionFieldText: 2000,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  actionId: 255,
  buttonValue: 2000,
  buttonUrl: 3000,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
} as const;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Slack counts characters; a UTF-16 surrogate pair is one character. */
const characters = (text: string): number => Array.from(text).length;

class Problems {
  readonly found: string[] = [];
  readonly blockIds = new Set<string>();
  readonly actionIds = new Set<string>();

  add(path: string, problem: string): void {
    this.found.push(`${path}: ${problem}`);
  }

  /** A string of at most `max` characters, present when `required`. */
  text(path: string, value: unknown, max: number, required = true): value is string {
    if (value === undefined && !required) return false;
    if (typeof value !== 'string' || value.length === 0) {
      this.add(path, 'must be a non-empty string');
      return false;
    }
    if (characters(value) > max) this.add(path, `longer than ${String(max)} characters`);
    return true;
  }

  /** A text object: `plain_text` (or `mrkdwn` where allowed) with text of at most `max`. */
  textObject(path: string, value: unknown, max: number, plainOnly: boolean): void {
    if (!isObject(value)) {
      this.add(path, 'must be a text object');
      return;
    }
    const allowed = plainOnly ? ['plain_text'] : ['plain_text', 'mrkdwn'];
    if (typeof value.type !== 'string' || !allowed.includes(value.type)) {
      this.add(`${path}.type`, `must be ${allowed.join(' or ')}`);
    }
    this.text(`${path}.text`, value.text, max);
  }
}

/** Every limit the blocks break, each as `<path>: <problem>`; empty when Slack would take them. */
export function blockKitProblems(blocks: unknown): string[] {
  const problems = new Problems();
  if (!Array.isArray(blocks)) {
    problems.add('blocks', 'must be an array');
    return problems.found;
  }
  if (blocks.length > MESSAGE_BLOCKS_MAX) {
    problems.add('blocks', `more than ${String(MESSAGE_BLOCKS_MAX)} blocks`);
  }
  blocks.forEach((block: unknown, index) => {
    checkBlock(problems, `blocks[${String(index)}]`, block);
  });
  return problems.found;
}

function checkBlock(problems: Problems, path: string, block: unknown): void {
  if (!isObject(block)) {
    problems.add(path, 'must be an object');
    return;
  }
  if (block.block_id !== undefined) {
    if (problems.text(`${path}.block_id`, block.block_id, LIMITS.blockId)) {
      if (problems.blockIds.has(block.block_id)) {
        problems.add(`${path}.block_id`, 'repeats another block_id of the message');
      }
      problems.blockIds.add(block.block_id);
    }
  }
  switch (block.type) {
    case 'header':
      problems.textObject(`${path}.text`, block.text, LIMITS.headerText, true);
      return;
    case 'divider':
      return;
    case 'section':
      checkSection(problems, path, block);
      return;
    case 'context':
      checkContext(problems, path, block);
      return;
    case 'actions':
      checkActions(problems, path, block);
      return;
    case 'rich_text':
      checkRichText(problems, path, block);
      return;
    default:
      problems.add(`${path}.type`, `unknown block type ${JSON.stringify(block.type)}`);
  }
}

function checkSection(problems: Problems, path: string, block: Json): void {
  if (block.text === undefined && block.fields === undefined) {
    problems.add(path, 'a section needs text or fields');
  }
  if (block.text !== undefined) {
    problems.textObject(`${path}.text`, block.text, LIMITS.sectionText, false);
  }
  if (block.fields !== undefined) {
    if (!Array.isArray(block.fields) || block.fields.length === 0) {
      problems.add(`${path}.fields`, 'must be a non-empty array');
    } else {
      if (block.fields.length > LIMITS.sectionFields) {
        problems.add(`${path}.fields`, `more than ${String(LIMITS.sectionFields)} fields`);
      }
      block.fields.forEach((field: unknown, index) => {
        problems.textObject(
          `${path}.fields[${String(index)}]`,
          field,
          LIMITS.sectionFieldText,
          false,
        );
      });
    }
  }
  if (block.accessory !== undefined) checkButton(problems, `${path}.accessory`, block.accessory);
}

function checkContext(problems: Problems, path: string, block: Json): void {
  const { elements } = block;
  if (!Array.isArray(elements) || elements.length === 0) {
    problems.add(`${path}.elements`, 'must be a non-empty array');
    return;
  }
  if (elements.length > LIMITS.contextElements) {
    problems.add(`${path}.elements`, `more than ${String(LIMITS.contextElements)} elements`);
  }
  elements.forEach((element: unknown, index) => {
    // Context text elements share the section's 3,000-character text object limit.
    problems.textObject(`${path}.elements[${String(index)}]`, element, LIMITS.sectionText, false);
  });
}

function checkActions(problems: Problems, path: string, block: Json): void {
  const { elements } = block;
  if (!Array.isArray(elements) || elements.length === 0) {
    problems.add(`${path}.elements`, 'must be a non-empty array');
    return;
  }
  if (elements.length > LIMITS.actionsElements) {
    problems.add(`${path}.elements`, `more than ${String(LIMITS.actionsElements)} elements`);
  }
  elements.forEach((element: unknown, index) => {
    checkButton(problems, `${path}.elements[${String(index)}]`, element);
  });
}

function checkButton(problems: Problems, path: string, element: unknown): void {
  if (!isObject(element) || element.type !== 'button') {
    problems.add(path, 'must be a button (the only element Gatehouse sends)');
    return;
  }
  problems.textObject(`${path}.text`, element.text, LIMITS.buttonText, true);
  if (problems.text(`${path}.action_id`, element.action_id, LIMITS.actionId, false)) {
    // An action_id must be unique in its block; Gatehouse keeps them unique in the message.
    if (problems.actionIds.has(element.action_id)) {
      problems.add(`${path}.action_id`, 'repeats another action_id of the message');
    }
    problems.actionIds.add(element.action_id);
  }
  problems.text(`${path}.value`, element.value, LIMITS.buttonValue, false);
  problems.text(`${path}.url`, element.url, LIMITS.buttonUrl, false);
  if (element.style !== undefined && element.style !== 'primary' && element.style !== 'danger') {
    problems.add(`${path}.style`, 'must be primary or danger');
  }
  if (element.confirm !== undefined) {
    const { confirm } = element;
    if (!isObject(confirm)) {
      problems.add(`${path}.confirm`, 'must be a confirmation dialog object');
      return;
    }
    problems.textObject(`${path}.confirm.title`, confirm.title, LIMITS.confirmTitle, true);
    problems.textObject(`${path}.confirm.text`, confirm.text, LIMITS.confirmText, false);
    problems.textObject(`${path}.confirm.confirm`, confirm.confirm, LIMITS.confirmButton, true);
    problems.textObject(`${path}.confirm.deny`, confirm.deny, LIMITS.confirmButton, true);
  }
}

/** A rich text block of sections and preformatted parts, each a list of text runs or links. */
function checkRichText(problems: Problems, path: string, block: Json): void {
  const { elements } = block;
  if (!Array.isArray(elements) || elements.length === 0) {
    problems.add(`${path}.elements`, 'must be a non-empty array');
    return;
  }
  elements.forEach((part: unknown, index) => {
    const partPath = `${path}.elements[${String(index)}]`;
    if (
      !isObject(part) ||
      (part.type !== 'rich_text_section' && part.type !== 'rich_text_preformatted')
    ) {
      problems.add(partPath, 'must be a rich_text_section or rich_text_preformatted');
      return;
    }
    if (!Array.isArray(part.elements) || part.elements.length === 0) {
      problems.add(`${partPath}.elements`, 'must be a non-empty array');
      return;
    }
    part.elements.forEach((run: unknown, runIndex) => {
      const runPath = `${partPath}.elements[${String(runIndex)}]`;
      if (!isObject(run) || (run.type !== 'text' && run.type !== 'link')) {
        problems.add(runPath, 'must be a text or link element');
        return;
      }
      // Slack documents no length for a rich text run: the message builders bound theirs.
      if (run.type === 'text') problems.text(`${runPath}.text`, run.text, Number.MAX_SAFE_INTEGER);
      else problems.text(`${runPath}.url`, run.url, LIMITS.buttonUrl);
    });
  });
}
