// A minimal MCP Apps host for tests: the real host side of @modelcontextprotocol/ext-apps (AppBridge)
// over a real MCP client (@modelcontextprotocol/client, Streamable HTTP) connected to the server.
// It does what a chat host does when a tool with `_meta.ui.resourceUri` is called: reads the ui://
// resource, renders it in a sandboxed iframe, forwards the tool's input and result, and proxies the
// view's tool calls to the server.
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const host = { name: "review-test-host", version: "1.0.0" };
window.hostLog = [];
window.modelContext = [];

async function connectClient(mcpUrl) {
  const client = new Client(host);
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  return client;
}

window.runTool = async ({ mcpUrl, tool, args, theme }) => {
  const client = window.client || (window.client = await connectClient(mcpUrl));
  const { tools } = await client.listTools();
  const described = tools.find((t) => t.name === tool);
  if (!described) throw new Error(`no tool ${tool}`);
  const uri = getToolUiResourceUri(described);
  const result = await client.callTool({ name: tool, arguments: args });
  window.hostLog.push({ tool, uri, isError: !!result.isError });
  if (!uri) return { uri: null, result };

  const resource = await client.readResource({ uri });
  const content = resource.contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`unexpected MIME type ${content.mimeType}`);

  const slot = document.getElementById("slot");
  slot.replaceChildren();
  const frame = document.createElement("iframe");
  frame.id = "app";
  frame.title = "Review changes";
  frame.setAttribute("sandbox", "allow-scripts");
  slot.append(frame);

  const bridge = new AppBridge(
    client,
    host,
    { serverTools: {}, serverResources: {}, logging: {}, openLinks: {}, updateModelContext: { text: {} } },
    { hostContext: { theme: theme || "light", displayMode: "inline", platform: "web", locale: "en-US" } },
  );
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${Math.ceil(height)}px`;
  };
  bridge.onupdatemodelcontext = async (params) => {
    window.modelContext.push(params);
    return {};
  };
  bridge.onloggingmessage = (params) => window.hostLog.push({ log: params });
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => {
      bridge.sendToolInput({ arguments: args });
      bridge.sendToolResult(result);
      resolve();
    };
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = content.text;
  await initialized;
  window.bridge = bridge;
  return { uri, mimeType: content.mimeType, meta: content._meta ?? null };
};
