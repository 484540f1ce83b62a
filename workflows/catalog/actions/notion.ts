import { z } from 'zod';
import { defineAction } from '../types.js';
import { blockInput, cursor, notionId, pageSize, richText, toBlocks } from './notion-shapes.js';

// Written against Notion-Version 2026-03-11 (see the app): databases hold data sources, which is
// what rows are created in and queried; trashing is `in_trash`; blocks are placed by `position`.

const pageId = notionId('A page id');
const propertyValues = z
  .record(z.string().min(1).max(200), z.record(z.string(), z.unknown()))
  .meta({
    description:
      'Notion property values keyed by property name, e.g. {"Status": {"status": {"name": "Done"}}}',
  });

const pagePath = (id: string) => `/v1/pages/${encodeURIComponent(id)}`;
const childrenPath = (id: string) => `/v1/blocks/${encodeURIComponent(id)}/children`;

/** Notion API: search, pages, page content and data sources shared with the integration. */
export const notionActions = [
  defineAction({
    app: 'notion',
    name: 'search',
    scope: 'read',
    description: 'Find pages and data sources shared with the integration by title.',
    input: z.strictObject({
      query: z.string().max(1000).optional(),
      only: z
        .enum(['page', 'data_source'])
        .optional()
        .meta({ description: 'Return only pages or only data sources (database tables)' }),
      sort: z
        .enum(['ascending', 'descending'])
        .optional()
        .meta({ description: 'Order by last edit time' }),
      start_cursor: cursor,
      page_size: pageSize,
    }),
    request: ({ only, sort, ...body }) => ({
      method: 'POST',
      path: '/v1/search',
      body: {
        ...body,
        filter: only && { property: 'object', value: only },
        sort: sort && { direction: sort, timestamp: 'last_edited_time' },
      },
    }),
  }),
  defineAction({
    app: 'notion',
    name: 'get_page',
    scope: 'read',
    description:
      "Get a page's properties (title, and a row's columns); get_block_children reads its content.",
    input: z.strictObject({ page_id: pageId }),
    request: ({ page_id }) => ({ method: 'GET', path: pagePath(page_id) }),
  }),
  defineAction({
    app: 'notion',
    name: 'get_block_children',
    scope: 'read',
    description: 'Read the content of a page (or of a block that has children), one level deep.',
    input: z.strictObject({
      block_id: notionId('A page or block id'),
      start_cursor: cursor,
      page_size: pageSize,
    }),
    request: ({ block_id, ...query }) => ({ method: 'GET', path: childrenPath(block_id), query }),
  }),
  defineAction({
    app: 'notion',
    name: 'create_page',
    scope: 'write',
    description: 'Create a page under a page, or a row in a data source, with a title and content.',
    input: z
      .strictObject({
        parent: z.union([
          z.strictObject({ page_id: pageId }),
          z.strictObject({ data_source_id: notionId('A data source id (from search)') }),
        ]),
        title: z.string().min(1).max(2000),
        properties: propertyValues
          .optional()
          .meta({ description: 'Other column values of a data source row' }),
        content: blockInput.optional(),
      })
      .refine(
        (input) => input.properties === undefined || 'data_source_id' in input.parent,
        'Only data source rows have properties besides the title',
      ),
    request: ({ parent, title, properties, content }) => ({
      method: 'POST',
      path: '/v1/pages',
      body: {
        parent,
        // `title` is the id of every page's title property, whatever its name in a data source.
        properties: { ...properties, title: { title: richText(title) } },
        children: content && toBlocks(content),
      },
    }),
  }),
  defineAction({
    app: 'notion',
    name: 'update_page',
    scope: 'write',
    description: "Change a page's title, property values or icon.",
    input: z
      .strictObject({
        page_id: pageId,
        title: z.string().min(1).max(2000).optional(),
        properties: propertyValues.optional(),
        icon_emoji: z.string().min(1).max(16).optional().meta({ description: 'e.g. 📌' }),
      })
      .refine(
        (input) => [input.title, input.properties, input.icon_emoji].some((v) => v !== undefined),
        'Nothing to change',
      ),
    request: ({ page_id, title, properties, icon_emoji }) => ({
      method: 'PATCH',
      path: pagePath(page_id),
      body: {
        properties:
          title === undefined ? properties : { ...properties, title: { title: richText(title) } },
        icon: icon_emoji && { type: 'emoji', emoji: icon_emoji },
      },
    }),
  }),
  defineAction({
    app: 'notion',
    name: 'trash_page',
    scope: 'destructive',
    description: 'Move a page (or data source row) to the trash, with everything inside it.',
    input: z.strictObject({ page_id: pageId }),
    request: ({ page_id }) => ({
      method: 'PATCH',
      path: pagePath(page_id),
      body: { in_trash: true },
    }),
  }),
  defineAction({
    app: 'notion',
    name: 'query_data_source',
    scope: 'read',
    description:
      'List the rows of a data source (a database table), optionally filtered and sorted.',
    input: z.strictObject({
      data_source_id: notionId('A data source id (from search)'),
      filter: z.record(z.string(), z.unknown()).optional().meta({
        description: 'A Notion filter, e.g. {"property": "Status", "status": {"equals": "Done"}}',
      }),
      sorts: z
        .array(
          z.union([
            z.strictObject({
              property: z.string().min(1),
              direction: z.enum(['ascending', 'descending']),
            }),
            z.strictObject({
              timestamp: z.enum(['created_time', 'last_edited_time']),
              direction: z.enum(['ascending', 'descending']),
            }),
          ]),
        )
        .max(10)
        .optional(),
      start_cursor: cursor,
      page_size: pageSize,
    }),
    request: ({ data_source_id, ...body }) => ({
      method: 'POST',
      path: `/v1/data_sources/${encodeURIComponent(data_source_id)}/query`,
      body,
    }),
  }),
  defineAction({
    app: 'notion',
    name: 'append_block_children',
    scope: 'write',
    description:
      'Add text blocks to a page (or block): at the end, at the start, or after a block.',
    input: z
      .strictObject({
        block_id: notionId('The page or block to add to'),
        blocks: blockInput,
        at_start: z.boolean().optional(),
        after_block_id: notionId('Insert after this child block').optional(),
      })
      .refine((input) => !(input.at_start && input.after_block_id), 'Choose one position'),
    request: ({ block_id, blocks, at_start, after_block_id }) => ({
      method: 'PATCH',
      path: childrenPath(block_id),
      body: {
        children: toBlocks(blocks),
        position: after_block_id
          ? { type: 'after_block', after_block: { id: after_block_id } }
          : at_start
            ? { type: 'start' }
            : undefined,
      },
    }),
  }),
];
