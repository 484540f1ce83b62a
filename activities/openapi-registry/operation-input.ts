/**
 * An OpenAPI operation's input, checked the way a remote MCP tool's is: against the accepted
 * descriptor's input schema in the schema thread (ajv, within its budgets, off the event loop),
 * then by building the request from it with the importer's buildRequest, which refuses what the
 * schema cannot say (a path value that would make the path resolve elsewhere, a header value that
 * would split). Both run when the call is made and again when it is prepared to run.
 */
import {
  buildRequest,
  RequestBuildError,
  type OperationDescriptor,
} from '../openapi-apps/index.js';
import { ToolSchemaUnusable, toolInputIssues, type InputIssue } from '../mcp-apps/tool-input.js';

export type OperationInputCheck =
  { ok: true } | { ok: false; issues: InputIssue[] } | { ok: false; unusable: string };

export async function operationInputCheck(
  descriptor: OperationDescriptor,
  input: unknown,
): Promise<OperationInputCheck> {
  let issues: InputIssue[];
  try {
    issues = await toolInputIssues(descriptor.inputSchema, input);
  } catch (error) {
    if (!(error instanceof ToolSchemaUnusable)) throw error;
    return { ok: false, unusable: error.message };
  }
  if (issues.length > 0) return { ok: false, issues };
  try {
    buildRequest(descriptor, input);
  } catch (error) {
    if (!(error instanceof RequestBuildError)) throw error;
    return { ok: false, issues: [{ path: error.field, message: error.message }] };
  }
  return { ok: true };
}
