// setTimeout's ceiling. Node fires a timer at once when its delay exceeds 2^31-1 ms (~24.8 days),
// so every configured duration that becomes a timer is bounded by this, and "never" is this.

export const MAX_TIMER_MS = 2_147_483_647;
