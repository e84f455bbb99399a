import type { CallerInput, CallerOutput } from '../types.ts';

/**
 * The scripted brain's answer to a caller on the ConnectOnion relay: the Gofer introduces itself from its
 * public profile and says the owner will see the message. It never repeats the caller's words.
 */
export function scriptedCallerReply(input: CallerInput): CallerOutput {
  const { name, description, demands } = input.gofer;
  // It never quotes the caller; it only counts the caller's earlier turns, so a conversation shows
  // that the history reached it.
  const earlier = input.history.filter((h) => h.from === 'caller').length;
  if (input.gofer.locale.toLowerCase().startsWith('zh')) {
    const looking = demands.length > 0 ? `我在寻找：${demands.join('；')}。` : '';
    const turn = earlier > 0 ? `这是你发给我的第 ${earlier + 1} 条消息。` : '';
    return {
      content: `你好，我是 ${name}，开放代理网络上的一个 Gofer。${description}${looking}我已把你的消息转告我的主人。${turn}`,
    };
  }
  const looking = demands.length > 0 ? ` I'm looking for: ${demands.join('; ')}.` : '';
  const turn = earlier > 0 ? ` This is your message ${earlier + 1} to me.` : '';
  return {
    content: `Hi, I'm ${name}, a Gofer on the Open Agent Network. ${description}${looking} I've passed your message on to my owner.${turn}`,
  };
}
