/** @tether/fake-anthropic-api — a scripted fake Anthropic Messages API on loopback. */
export const VERSION = '0.1.0';

export { startFakeAnthropicApi } from './server.js';
export {
  dropConnectionReply,
  errorReply,
  holdReply,
  malformedStreamReply,
  streamErrorReply,
  textReply,
  thinkingReply,
  toolUseReply,
} from './builders.js';
export { COMPACTION_TEXT, UNSCRIPTED_TEXT } from './choose-reply.js';
export { isCompactionPrompt } from './request-view.js';
export type {
  FakeAnthropicApi,
  FakeAttachedFile,
  FakeBlock,
  FakeDropConnectionReply,
  FakeErrorReply,
  FakeHoldReply,
  FakeMalformedStreamReply,
  FakeMessageReply,
  FakeReply,
  FakeRequestView,
  FakeResponder,
  FakeStreamErrorReply,
  FakeToolResult,
  FakeUserBlock,
  FakeUsage,
  RecordedReplyKind,
  RecordedRequest,
  RecordedRequestKind,
  StartFakeAnthropicApiOptions,
  WaitForRequestsOptions,
} from './types.js';
