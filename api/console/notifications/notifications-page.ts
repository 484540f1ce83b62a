import type { NotificationRoute } from '../../../activities/db/notification-routes.js';
import {
  KIND_LABELS,
  OPT_OUT_KINDS,
  type NotificationKind,
} from '../../../activities/notifications/kinds.js';
import {
  addresseeInWords,
  type KindReach,
  type ReachingTarget,
} from '../../../activities/notifications/person-reach.js';
import type { NotificationTarget } from '../../../activities/notifications/routing.js';
import { html, type Html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';

export interface NotificationsPage {
  branding: ResolvedBranding;
  viewer: Viewer;
  reach: KindReach[];
  /** The kinds this person opted out of in the environment. */
  optedOut: readonly NotificationKind[];
  /** The environment's routes, to name a Teams webhook by its host. */
  routes: readonly NotificationRoute[];
  /** What the person just changed, to say so. */
  done?: { kind: NotificationKind; optedOut: boolean };
}

function where(target: NotificationTarget, routes: readonly NotificationRoute[]): string {
  const { to } = target;
  if (to.slackDmEmail) return `a Slack direct message to ${to.slackDmEmail}`;
  if (to.slackChannel) return `Slack channel ${to.slackChannel}`;
  if (to.teamsWebhookRef) {
    const route = routes.find((candidate) => candidate.id === to.teamsWebhookRef);
    const host = route?.target.type === 'webhook' ? route.target.host : 'a workflow webhook';
    return `a Teams channel, through ${host}`;
  }
  return to.email ?? '';
}

/** "you by name, group approvers or any approver". */
function inWords(addressees: readonly string[]): string {
  const words = addressees.map(addresseeInWords);
  return words.length <= 1
    ? (words[0] ?? '')
    : `${words.slice(0, -1).join(', ')} or ${words.at(-1) ?? ''}`;
}

function ways(reaching: readonly ReachingTarget[], routes: readonly NotificationRoute[]): Html {
  return html`<ul>
    ${reaching.map(
      ({ target, addressees }) =>
        html`<li>
          ${where(target, routes)}<span class="muted"
            >, when an approval asks ${inWords(addressees)}</span
          >
        </li>`,
    )}
  </ul>`;
}

function kindPanel(page: NotificationsPage, reach: KindReach): Html {
  const { viewer } = page;
  const label = KIND_LABELS[reach.kind];
  const optedOut = page.optedOut.includes(reach.kind);
  const mayOptOut = (OPT_OUT_KINDS as readonly string[]).includes(reach.kind);
  return html`<section aria-labelledby="kind-${reach.kind}">
    <h2 id="kind-${reach.kind}">
      ${label}
      ${
        optedOut
          ? html`<span class="badge bad">opted out</span>`
          : reach.personal.length > 0 && reach.channelSet
            ? html`<span class="badge ok">reaches you</span>`
            : ''
      }
    </h2>
    <div class="panel">
      ${
        !reach.channelSet
          ? html`<p class="muted">
              Not set up in ${viewer.environment}: nothing is sent this way.
            </p>`
          : ''
      }
      ${
        reach.personal.length > 0
          ? html`<p>To you alone${optedOut ? ' (stopped: you opted out)' : ''}:</p>
              ${ways(reach.personal, page.routes)}`
          : html`<p class="muted">Nothing is addressed to you alone this way.</p>`
      }
      ${
        reach.shared.length > 0 &&
        html`<p>
            In shared places, which an opt-out leaves as they are (others are told there too):
          </p>
          ${ways(reach.shared, page.routes)}`
      }
      ${
        mayOptOut
          ? html`<form class="actions" method="post" action="${viewer.base}/notifications">
              <input type="hidden" name="csrf" value="${viewer.formToken}" />
              <input type="hidden" name="kind" value="${reach.kind}" />
              <input type="hidden" name="choice" value="${optedOut ? 'in' : 'out'}" />
              <button class="${optedOut ? '' : 'quiet'}" type="submit">
                ${optedOut ? `Opt back in to ${label}` : `Opt out of ${label}`}
              </button>
            </form>`
          : html`<p class="muted">
              Teams is told in shared channels only, so there is nothing to opt out of.
            </p>`
      }
    </div>
  </section>`;
}

/**
 * Where this person is told of the held calls that ask them, per channel: what is addressed to
 * them alone (which they can opt out of) and the shared places they are told in, with the
 * approvals that send each (asking them by name, one of their groups, or any approver).
 */
export function renderNotificationsPage(page: NotificationsPage): string {
  const { viewer } = page;
  const said = page.done
    ? `${page.done.optedOut ? 'You opted out of' : 'You opted back in to'} ${KIND_LABELS[page.done.kind]}.`
    : null;
  return renderConsolePage({
    branding: page.branding,
    title: 'Notifications',
    section: 'notifications',
    viewer,
    body: html`
      <h1>Notifications</h1>
      <p class="lead">
        When a call is held for approval, the people it asks are told where they already work. This
        is where you are told in ${viewer.environment}, from your groups at this sign-in.
      </p>
      ${said && html`<p class="notice good" role="status">${said}</p>`}
      ${page.reach.map((reach) => kindPanel(page, reach))}
    `,
  });
}
