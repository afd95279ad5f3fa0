// The host side of the contact cards test, run in Chromium: what a chat client supporting MCP Apps does with a tool
// result whose tool points to a ui:// page. Each page runs in a sandboxed frame of its own (scripts only, an opaque
// origin), talks to this page through ext-apps' AppBridge, and is handed the result once it has initialized.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

/** The links the pages asked the host to open (ui/open-link). */
window.openedLinks = [];

/** Shows `page` in a new frame titled `title` under `parent` with `hostContext`, hands it `result`, and resolves once it has it. */
window.showCards = async ({ title, page, result, hostContext, parent }) => {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.title = title;
  const caption = document.createElement('h2');
  caption.textContent = title;
  document.getElementById(parent).append(caption, frame);
  const bridge = new AppBridge(null, { name: 'contacts-cards-test-host', version: '1.0.0' }, { openLinks: {} }, { hostContext });
  bridge.onopenlink = async ({ url }) => {
    window.openedLinks.push(url);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) frame.style.height = `${height}px`;
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = page;
  await initialized;
  await bridge.sendToolInput({ arguments: {} });
  await bridge.sendToolResult(result);
};
