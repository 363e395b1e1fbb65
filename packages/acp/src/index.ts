// TODO(issue 15): the ACP agent.
export const VERSION = '0.1.0';
