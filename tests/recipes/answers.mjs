// The smallest successful answers of the OpenAI and Anthropic APIs that
// their SDKs accept ('hi'), by path: the scripted server's last step in the
// recipes' tests (tests/recipes/, tests/package/docs.test.mjs).
export const SDK_ANSWERS = {
  '/v1/chat/completions': {
    id: 'c',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  },
  '/v1/messages': {
    id: 'm',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content: [{ type: 'text', text: 'hi' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 1, output_tokens: 1 },
  },
};
