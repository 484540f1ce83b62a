-- RFC 9207 (authorization server issuer identification), which the MCP authorization
-- specification asks clients to apply: what the authorization response of an MCP app's connect
-- attempt must carry in `iss`. `response_issuer` is the `issuer` of the authorization server
-- metadata the attempt was started with, verbatim, since RFC 9207 §2.4 compares the two as
-- strings. `response_issuer_required`: that metadata said
-- `authorization_response_iss_parameter_supported`, so a response without `iss` is refused too.
-- Attempts started before this migration (they live minutes) take both from the discovery they
-- recorded, or the authorization server's URL where it kept no metadata.
alter table mcp_oauth_attempts add column response_issuer text;
alter table mcp_oauth_attempts
  add column response_issuer_required boolean not null default false;
update mcp_oauth_attempts set
  response_issuer = coalesce(discovery #>> '{authorizationServerMetadata,issuer}', issuer),
  response_issuer_required = coalesce(
    discovery #>> '{authorizationServerMetadata,authorization_response_iss_parameter_supported}'
      = 'true',
    false);
alter table mcp_oauth_attempts alter column response_issuer set not null;

-- The MCP protocol revision a remote MCP server negotiated (the `protocolVersion` its
-- `initialize` answered) the last time Gatehouse listed its tools: what the operator learns of
-- which revision each server speaks. Null until a listing answered (an OAuth-protected server is
-- listed once a user connected).
alter table mcp_apps add column protocol_version text;
