// ctxmode for OpenCode: the session's memory across compactions (https://github.com/ctxmode).
// Written by `ctxmode install --host opencode`; `ctxmode uninstall --host opencode` removes it.
// Each event goes to ctxmode's hook scripts as stdin JSON (as other clients' hooks do); what
// they print (the snapshot after a compaction) is added to the system prompt. Every failure
// is swallowed: ctxmode must never break OpenCode. Plain JS, no imports but Node's.
import { spawn } from "node:child_process";

const PYTHON = "@PYTHON@";
const HOOKS = "@HOOKS@";
// How long each call may take (ms) before the plugin kills it and goes on without it
// (install writes them from the host's table: ctxmode/hosts/opencode/__init__.py, HOOKS).
const TIMEOUTS = { post_tool_use: 10000, user_prompt_submit: 10000, pre_compact: 30000, session_start: 30000, session_end: 5000 };

// Hand one payload to a hook script; resolves to what it printed ("" on any failure).
function call(shim, payload) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    let child;
    let timer;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(out);
    };
    try {
      child = spawn(PYTHON, ["-I", "-S", `${HOOKS}/${shim}.py`, "--host", "opencode"], {
        stdio: ["pipe", "pipe", "ignore"],
        detached: true, // a process group of its own: ctxmode tells its calls apart by it
      });
      timer = setTimeout(() => {
        out = "";
        try { process.kill(-child.pid, "SIGKILL"); } catch {}
        finish();
      }, TIMEOUTS[shim] || 10000);
      child.on("error", () => { out = ""; finish(); });
      child.stdout.setEncoding("utf8"); // a character split across two chunks stays whole
      child.stdout.on("data", (chunk) => { out += chunk; });
      child.on("close", finish);
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
    } catch {
      out = "";
      finish();
    }
  });
}

// The text a hook handed to the model (Claude Code's additionalContext JSON), or "".
function context(printed) {
  try {
    const text = JSON.parse(printed).hookSpecificOutput.additionalContext;
    return typeof text === "string" ? text : "";
  } catch {
    return "";
  }
}

export const CtxmodePlugin = async ({ directory }) => {
  const held = new Map(); // session → the snapshot its model requests carry
  const seen = new Set(); // sessions this process started or resumed
  const starting = new Map(); // session → its SessionStart call in flight

  const send = (shim, hook, input, output, extra) =>
    call(shim, { hook, directory, input, output, ...extra }).catch(() => "");

  const start = (session, hook, input, source) => {
    seen.add(session);
    const pending = send("session_start", hook, input, null, { source }).then((printed) => {
      const text = context(printed);
      if (text) held.set(session, text);
    });
    starting.set(session, pending);
    return pending.finally(() => {
      if (starting.get(session) === pending) starting.delete(session);
    });
  };

  return {
    event: async (arg) => {
      try {
        const event = arg.event;
        const props = event.properties || {};
        const session = props.sessionID || (props.info && props.info.id);
        if (!session) return;
        if (event.type === "session.created" && props.info && props.info.parentID) {
          seen.add(session); // a subagent's session (task): no snapshot of its own to take
        } else if (event.type === "session.created") await start(session, event.type, event, "startup");
        else if (event.type === "session.compacted") await start(session, event.type, event, "compact");
        else if (event.type === "session.idle") await send("session_end", event.type, event, null);
        else if (event.type === "message.part.updated" && props.part && props.part.type === "tool"
          && props.part.state && props.part.state.status === "error") {
          // A tool that threw fires no tool.execute.after: its failure comes from here.
          await send("post_tool_use", "tool.error", event, null);
        }
      } catch {}
    },
    "chat.message": async (input, output) => {
      try { await send("user_prompt_submit", "chat.message", input, { message: output.message, parts: output.parts }); } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try { await send("post_tool_use", "tool.execute.after", input, output); } catch {}
    },
    "experimental.session.compacting": async (input) => {
      try {
        held.delete(input.sessionID); // the summary request gets none; the next snapshot follows
        await send("pre_compact", "experimental.session.compacting", input, null);
      } catch {}
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const session = input.sessionID;
        if (!session) return;
        if (!seen.has(session)) start(session, "session.start", { sessionID: session }, "resume");
        if (starting.has(session)) await starting.get(session);
        const text = held.get(session);
        if (text && Array.isArray(output.system) && !output.system.some((s) => s.includes(text))) {
          output.system.push(text);
        }
      } catch {}
    },
  };
};
