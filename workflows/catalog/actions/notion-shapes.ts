import { z } from 'zod';

/** Input shapes and Notion objects shared by the Notion actions. */

export const notionId = (description: string) =>
  z
    .string()
    .regex(/^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/)
    .meta({ description: `${description} (32 hex digits, dashes optional)` });

export const cursor = z
  .string()
  .min(1)
  .max(500)
  .optional()
  .meta({ description: '`next_cursor` of the previous page' });

export const pageSize = z.number().int().min(1).max(100).optional();

/** Plain blocks an agent can write without knowing Notion's block objects. */
export const blockInput = z
  .array(
    z.strictObject({
      type: z
        .enum([
          'paragraph',
          'heading_1',
          'heading_2',
          'heading_3',
          'bulleted_list_item',
          'numbered_list_item',
          'to_do',
          'quote',
        ])
        .default('paragraph'),
      // Notion caps one text object at 2000 characters.
      text: z.string().min(1).max(2000),
    }),
  )
  .min(1)
  .max(100);

export const richText = (content: string) => [{ type: 'text', text: { content } }];

export const toBlocks = (blocks: z.infer<typeof blockInput>) =>
  blocks.map(({ type, text }) => ({
    object: 'block',
    type,
    [type]: { rich_text: richText(text) },
  }));
