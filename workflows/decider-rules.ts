/**
 * Who may decide a held call, and how many must agree: four eyes (a governed agent never decides
 * its own calls) and two-person rules (an approval that needs several approvals needs that many
 * different deciders, none of them owning the held agent's keys). Pure, so the API (which answers
 * with the reason) and the call workflow (which refuses the Update whatever path it came by) judge
 * alike.
 */

/** Who decides. The API, the console and the hosted page build these; the workflow judges them. */
export type Decider =
  /** An API key with `approvals:decide`. */
  | { kind: 'key'; agentId: string }
  /** A person signed in with the identity provider, deciding in the console or through a link. */
  | {
      kind: 'person';
      issuer: string;
      subject: string;
      name: string;
      email: string;
      groups: string[];
      via: 'console' | 'link' | 'slack';
    }
  /**
   * A decision link used by someone not signed in. `addressee` is the `requested_from` entry the
   * link was made for (`person:bob@example.com`, `group:finance`, `admin`), or `role:approver`
   * when nobody was named.
   */
  | { kind: 'link'; addressee: string };

/** The addressee of the one link made when `requested_from` names nobody. */
export const ANY_APPROVER = 'role:approver';
/**
 * What that addressee was called before: links stored then still decide, labelled as they were
 * (`decided_by` `approval-link`).
 */
export const LEGACY_ANY_APPROVER = 'approval-link';

const PERSON = 'person:';
const GROUP = 'group:';

/** Emails compare without regard to case: the identity provider and the policy may differ. */
function personEntry(email: string): string {
  return `${PERSON}${email.toLowerCase()}`;
}

/** A `requested_from` entry in the form decisions are compared in (`person:` lower-cased). */
export function normalEntry(entry: string): string {
  return entry.startsWith(PERSON) ? personEntry(entry.slice(PERSON.length)) : entry;
}

/**
 * Who a decision counts as: the same identity never decides one approval twice, whatever path
 * it takes (a person through the console and through a link addressed to them are one).
 */
export function deciderIdentity(decider: Decider): string {
  switch (decider.kind) {
    case 'key':
      return decider.agentId;
    case 'person':
      return personEntry(decider.email);
    case 'link':
      return normalEntry(decider.addressee);
  }
}

/** What `decided_by` and a decision's `by` show. */
export function deciderLabel(decider: Decider): string {
  switch (decider.kind) {
    case 'key':
      return decider.agentId;
    case 'person':
      return `${PERSON}${decider.email}`;
    case 'link':
      return decider.addressee === LEGACY_ANY_APPROVER
        ? LEGACY_ANY_APPROVER
        : `${decider.addressee} (decision link)`;
  }
}

/** Old callers name a key's agent id alone. */
function asDecider(decider: Decider | string): Decider {
  return typeof decider === 'string' ? { kind: 'key', agentId: decider } : decider;
}

/** An entry that names a key's agent: not a person, a group or a role. */
function bareName(entry: string): boolean {
  return !entry.startsWith(PERSON) && !entry.startsWith(GROUP) && !entry.startsWith('role:');
}

export interface HeldCallParties {
  /** The agent whose call is held. */
  agentId: string;
  /** Who the policy asked to decide; empty means any decider who is not the agent. */
  requestedFrom: readonly string[];
  /** The identities (deciderIdentity) that have decided this approval so far. */
  decided?: readonly string[];
  /** Emails of the owners of the held agent's live API keys, as the approval recorded them. */
  agentKeyOwners?: readonly string[];
}

/** Whether the policy asked this decider. */
function asked(requestedFrom: readonly string[], decider: Decider): boolean {
  if (requestedFrom.length === 0) return true;
  switch (decider.kind) {
    case 'key':
      // Only a bare name is a key's agent id: a key whose agent is called `person:…` is no person.
      return requestedFrom.some((entry) => bareName(entry) && entry === decider.agentId);
    case 'person': {
      const self = personEntry(decider.email);
      return requestedFrom.some(
        (entry) =>
          normalEntry(entry) === self ||
          (entry.startsWith(GROUP) && decider.groups.includes(entry.slice(GROUP.length))),
      );
    }
    case 'link': {
      const addressee = normalEntry(decider.addressee);
      return requestedFrom.some((entry) => normalEntry(entry) === addressee);
    }
  }
}

/** The email a decider decides as, when it is a person's (a person, or a link made for one). */
function personEmail(decider: Decider): string | null {
  if (decider.kind === 'person') return decider.email.toLowerCase();
  if (decider.kind === 'link' && decider.addressee.startsWith(PERSON)) {
    return decider.addressee.slice(PERSON.length).toLowerCase();
  }
  return null;
}

function quoted(names: readonly string[]): string {
  return names.map((name) => `"${name}"`).join(', ');
}

/**
 * Why `decider` may not decide this approval, or null when it may: the held call's own agent;
 * anyone the policy did not ask; whoever decided it already; a person who owns one of the held
 * agent's keys. A plain string is a key's agent id (callers written before deciders had kinds).
 */
export function deciderRefusal(parties: HeldCallParties, decider: Decider | string): string | null {
  const who = asDecider(decider);
  const label = deciderLabel(who);
  if (who.kind !== 'person' && deciderIdentity(who) === parties.agentId) {
    return `Agent "${parties.agentId}" made the held call, and an agent can never decide its own approval.`;
  }
  if (!asked(parties.requestedFrom, who)) {
    const groups =
      who.kind === 'person'
        ? ` (groups: ${who.groups.length > 0 ? who.groups.join(', ') : 'none'})`
        : '';
    return `This approval is requested from ${quoted(parties.requestedFrom)}; "${label}"${groups} is not among them.`;
  }
  if ((parties.decided ?? []).includes(deciderIdentity(who))) {
    return `"${label}" has already decided this approval, and the same person cannot decide it twice: another decider must.`;
  }
  const email = personEmail(who);
  const owners = (parties.agentKeyOwners ?? []).map((owner) => owner.toLowerCase());
  if (email !== null && owners.includes(email)) {
    return `"${label}" owns an API key of agent "${parties.agentId}", whose call is held, and the owner of an agent's key can never decide its calls.`;
  }
  return null;
}

/** The most approvals an approval may need. */
export const MAX_QUORUM = 10;

/**
 * Why `quorum` approvals can never come from `requestedFrom`, or null: quorum 3 needs three
 * different deciders, so naming two people cannot reach it. A group may hold any number of
 * people, and an empty list asks anyone who may decide, so either makes any quorum reachable.
 */
export function quorumProblem(requestedFrom: readonly string[], quorum: number): string | null {
  if (quorum <= 1 || requestedFrom.length === 0) return null;
  if (requestedFrom.some((entry) => entry.startsWith(GROUP))) return null;
  const distinct = new Set(requestedFrom.map(normalEntry));
  if (quorum <= distinct.size) return null;
  return `quorum ${String(quorum)} needs ${String(quorum)} different deciders, but requested_from names only ${String(distinct.size)} (${quoted([...distinct])}): name more deciders, or a group`;
}

/** Deciders in words, for audit's `approved by …` and a grant's `created_by`: `a and b`. */
export function decidersInWords(labels: readonly string[]): string {
  if (labels.length <= 1) return labels.join('');
  return `${labels.slice(0, -1).join(', ')} and ${labels.at(-1) ?? ''}`;
}
