/**
 * A share of a process's delivery slots (docs/webhooks.md, "Fair shares"). An endpoint with changes to send and no failure
 * waiting is delivered to in the current lane; one whose retry is due, in the retrying lane, a small one of its own:
 * endpoints that keep failing, however many, hold only its slots. In each lane one owner holds at most `perOwner`
 * endpoints of a process, and a lease goes round the owners, so that no owner waits behind another's timeouts.
 */
export interface DeliveryLane {
  retrying: boolean;
  /** Endpoints of the lane a process works on at once. */
  endpoints: number;
  /** Of those, at most this many of one owner. */
  perOwner: number;
  /** Attempts in flight to one endpoint at once. */
  sendsPerEndpoint: number;
  /**
   * True: the lease ends with the first attempt acknowledged (a probe: the endpoint answers again, and its next lease
   * is in the current lane). False: batch after batch, for up to the dispatcher's turn.
   */
  probe: boolean;
}

const CURRENT_LANE: DeliveryLane = { retrying: false, endpoints: 16, perOwner: 4, sendsPerEndpoint: 4, probe: false };
const RETRYING_LANE: DeliveryLane = { retrying: true, endpoints: 4, perOwner: 1, sendsPerEndpoint: 1, probe: true };
/** The lanes in the order a poll fills them. */
export const DELIVERY_LANES: readonly DeliveryLane[] = [CURRENT_LANE, RETRYING_LANE];
