// The classic group state machine, exactly Kafka's ClassicGroupState:
//
//   Empty ──join──▶ PreparingRebalance ──all joined / timeout──▶ CompletingRebalance ──leader sync──▶ Stable
//     ▲                 │    ▲                                        │                               │
//     └──no members─────┘    └──────── join / leave / expiry ─────────┴───────────────────────────────┘
//   any state ──delete / unload──▶ Dead
//
// `canTransition` is the single source of which moves are legal; ClassicGroup's
// `transitionTo` is the only place a state changes and refuses anything else.

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export const GROUP_STATES: readonly GroupState[] = [
  'Empty',
  'PreparingRebalance',
  'CompletingRebalance',
  'Stable',
  'Dead',
];

/** The states a group may be in before moving to `to`. */
export function validPreviousStates(to: GroupState): readonly GroupState[] {
  switch (to) {
    case 'Empty':
      return ['PreparingRebalance'];
    case 'PreparingRebalance':
      return ['Stable', 'CompletingRebalance', 'Empty'];
    case 'CompletingRebalance':
      return ['PreparingRebalance'];
    case 'Stable':
      return ['CompletingRebalance'];
    case 'Dead':
      return ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'];
  }
}

export function canTransition(from: GroupState, to: GroupState): boolean {
  return validPreviousStates(to).includes(from);
}

/** Whether a rebalance may start from this state (Kafka: PreparingRebalance's valid previous states). */
export function canRebalance(state: GroupState): boolean {
  return canTransition(state, 'PreparingRebalance');
}

/** Case-insensitive parse of a state name as ListGroups' states filter sends it. */
export function parseGroupState(name: string): GroupState | null {
  const lower = name.trim().toLowerCase();
  return GROUP_STATES.find((s) => s.toLowerCase() === lower) ?? null;
}

export class IllegalGroupTransitionError extends Error {
  constructor(groupId: string, from: GroupState, to: GroupState) {
    super(
      `Group ${groupId} should be in one of ${validPreviousStates(to).join(', ')} before moving to ${to}; it is ${from}`,
    );
    this.name = 'IllegalGroupTransitionError';
  }
}
