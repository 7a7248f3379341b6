-- snippet: runs the ingress-nginx snippets (server-snippet, then configuration-snippet) that the controller
-- compiled from its allowlist into data (reconcilers/annotations/snippets.ts; SnippetStatement in
-- reconcilers/config/types.ts). Nothing here interprets nginx syntax or reads a variable outside the allowlist:
-- the data says which request variable, capture or snippet variable each value part is.
--
-- Per request, like nginx's phases:
--   1. rewrite-module statements run in order: set (a per-request table, not nginx variables), rewrite (PCRE on
--      $uri: the path, and the query, change as the rewrite plugin changes them; a redirect answers), return
--      (answered through the engine's deny path: util.deny / util.answer_raw), break, if (the body runs when the
--      condition holds; its captures $1..$9 are those of the last successful regex). A return or redirect ends
--      everything; break, rewrite ... last|break end that snippet (the server snippet's end lets the
--      configuration snippet run, as nginx's server and location rewrite phases do);
--   2. the header directives are declarative, as in nginx: those at the top level of a snippet always apply, those
--      of an if block when it held; their values are evaluated once the statements ran (final variables). Request
--      headers (proxy_set_header, more_set_input_headers, more_clear_input_headers) are set before proxying;
--   3. response headers (add_header, more_set_headers, more_clear_headers) are applied in the header filter — to
--      the backend's answer, or to the snippet's own return. add_header applies to 200, 201, 204, 206, 301, 302,
--      303, 304, 307 and 308 unless `always`; more_set_headers -s/-t restrict by status and Content-Type.
-- A value that reads the request can hold anything the client sent ($uri is decoded): control characters are
-- percent-encoded before a value becomes a header, and a Location also gets spaces and non-ASCII encoded.
--
-- The router runs this plugin in set_by_lua (run_sync) and then jumps to the plugin location for the header
-- filter, which loses ngx.ctx: the evaluated response headers wait in a per-worker table keyed by the request
-- (its nginx request pointer), taken by the header filter and dropped in the log phase at the latest.
local util = require("portico.plugins.util")

local _M = {}

-- The plugin (portico/plugins/registry.lua): its type name, its place in the chain (ascending) and its traits. Made
-- only from annotations (never a Plugin object): last, after every access decision.
_M.name = "snippet"
_M.order = 13

local ADD_STATUSES = { [200] = true, [201] = true, [204] = true, [206] = true, [301] = true, [302] = true, [303] = true,
  [304] = true, [307] = true, [308] = true }

-- ---- per-request state across the jump to the plugin location --------------------------------------------------
local base_ok, base = pcall(require, "resty.core.base")
local get_request = base_ok and type(base) == "table" and base.get_request or nil
local waiting, waiting_n = {}, 0
local MAX_WAITING = 16384

local ffi_ok, ffi = pcall(require, "ffi")

-- The key of the current request: the address of nginx's request (the same before and after a named-location
-- jump; a number, since two cdata pointers to one address are different table keys), or ngx.ctx where that is not
-- available (tests; and it is right within one location).
function _M._key()
  local r = get_request and get_request()
  if r ~= nil then
    if type(r) == "cdata" and ffi_ok then return tonumber(ffi.cast("uintptr_t", r)) end
    return r
  end
  return ngx.ctx
end

local function keep(list)
  local k = _M._key()
  if waiting[k] == nil then
    if waiting_n >= MAX_WAITING then
      -- Requests that ended without a log phase of ours never took theirs: start over rather than grow.
      util.log_every("snippet-waiting", ngx.WARN, "portico: snippet: ", waiting_n, " pending header sets; dropped")
      waiting, waiting_n = {}, 0
    end
    waiting_n = waiting_n + 1
  end
  waiting[k] = list
end

local function take()
  local k = _M._key()
  local list = waiting[k]
  if list ~= nil then
    waiting[k] = nil
    waiting_n = waiting_n - 1
  end
  return list
end

-- Log phase (plugins.log): a request that never reached the header filter leaves nothing behind.
function _M.forget()
  if waiting_n > 0 then take() end
end
_M.log = _M.forget -- the registry's log hook (plugins.log)
function _M._waiting() return waiting_n end

-- ---- values ------------------------------------------------------------------------------------------------------
local function var(name)
  if name == "server_name" then name = "host" end -- one nginx server serves every host: the request's host
  local v = ngx.var[name]
  if type(v) == "table" then v = v[1] end
  if v == nil then return "" end
  return tostring(v)
end

local function eval(parts, st)
  local n = #parts
  if n == 1 and type(parts[1]) == "string" then return parts[1] end
  local buf = {}
  for i = 1, n do
    local p = parts[i]
    if type(p) == "string" then
      buf[i] = p
    elseif p.v then
      buf[i] = var(p.v)
    elseif p.c then
      local c = st.caps and st.caps[p.c]
      buf[i] = (c and tostring(c)) or ""
    else
      buf[i] = st.vars[p.s] or ""
    end
  end
  return table.concat(buf)
end

-- A header value: control characters (other than tab) percent-encoded, so nothing a client sent can end a header.
local function header_value(s)
  return (s:gsub("[%z\1-\8\10-\31\127]", function(c) return string.format("%%%02X", c:byte()) end))
end

local function content_type(v)
  if type(v) == "table" then v = v[1] end
  if not v then return "" end
  return (tostring(v):lower():gsub(";.*$", ""):gsub("%s+$", ""))
end

local function type_ok(op, ctype)
  if not op.types then return true end
  for _, t in ipairs(op.types) do
    if t == ctype then return true end
  end
  return false
end

local function status_ok(op, status)
  if not op.statuses then return true end
  for _, s in ipairs(op.statuses) do
    if s == status then return true end
  end
  return false
end

-- ---- statements ----------------------------------------------------------------------------------------------------
local function re_match(s, regex, opts)
  local m, err = ngx.re.match(s, regex, opts)
  if err then
    util.log_every("snippet-re:" .. regex, ngx.ERR, "portico: snippet: regex ", regex, " failed: ", err, "; taken as no match")
    return nil
  end
  return m
end

local function test(cond, st)
  local t = cond.test
  if t == "nonempty" then
    local v = eval(cond.value, st)
    return v ~= "" and v ~= "0"
  elseif t == "eq" or t == "ne" then
    local same = eval(cond.left, st) == eval(cond.right, st)
    if t == "eq" then return same end
    return not same
  end
  local m = re_match(eval(cond.left, st), cond.regex, cond.caseless and "joi" or "jo")
  if cond.negate then return m == nil end
  if m then st.caps = m end
  return m ~= nil
end

-- Collects the header directives of a block (not those of its if blocks: they count only when their if holds).
local function declare(block, st)
  for _, s in ipairs(block) do
    if s.op == "response" then
      st.resp[#st.resp + 1] = s
    elseif s.op == "request" then
      st.req[#st.req + 1] = s
    end
  end
end

local function redirect_answer(st, status, loc)
  st.answer = { status = status, location = util.escape_query(loc) }
end

-- Runs a block's rewrite-module statements. Returns "answer" (a return or redirect), "stop" (break, rewrite
-- last/break) or nil.
local function run(block, st)
  for _, s in ipairs(block) do
    local op = s.op
    if op == "set" then
      st.vars[s.name] = eval(s.value, st)
    elseif op == "if" then
      if test(s.cond, st) then
        declare(s.body, st)
        local r = run(s.body, st)
        if r then return r end
      end
    elseif op == "return" then
      if s.location then
        redirect_answer(st, s.status, eval(s.location, st))
      else
        st.answer = { status = s.status, text = s.text and eval(s.text, st) }
      end
      return "answer"
    elseif op == "rewrite" then
      local m = re_match(ngx.var.uri or "/", s.regex, "jo")
      if m then
        st.caps = m
        local path = eval(s.path, st)
        local args = s.args and eval(s.args, st)
        local client = ngx.var.args
        if s.keepArgs and client and client ~= "" then
          args = (args and args ~= "") and (args .. "&" .. client) or client
        end
        if s.redirect then
          redirect_answer(st, s.redirect, (args and args ~= "") and (path .. "?" .. args) or path)
          return "answer"
        end
        if path:sub(1, 1) ~= "/" then path = "/" .. path end
        if path ~= ngx.var.uri then ngx.req.set_uri(path, false) end
        if s.args or not s.keepArgs then ngx.req.set_uri_args(args or "") end
        if s.stop then return "stop" end
      end
    elseif op == "break" then
      return "stop"
    end
  end
end

local HOST = "^[%w.-]+$"
local HOST_PORT = "^[%w.-]+:%d+$"

local function set_request_header(name, v)
  if v == nil then ngx.req.clear_header(name) else ngx.req.set_header(name, v) end
end

-- The request-header directives, through `set(name, value or nil)` (the request's own headers by default; the
-- auth subrequest's, which external-auth puts back afterwards, for an auth-snippet).
local function request_headers(ops, st, set)
  set = set or set_request_header
  local ctype = content_type(ngx.var.content_type)
  for _, op in ipairs(ops) do
    if type_ok(op, ctype) then
      local name = op.name
      if op.action == "clear" then
        if name:sub(-1) == "*" then
          local prefix = name:sub(1, -2):lower()
          for h in pairs(ngx.req.get_headers(0, true)) do
            if h:lower():sub(1, #prefix) == prefix then set(h, nil) end
          end
        else
          set(name, nil)
        end
      else
        local v = eval(op.value, st)
        if name == "host" then
          -- proxy_set_header Host: the Host sent upstream (as upstream-vhost), only when it is a host[:port].
          if v ~= "" and (v:match(HOST) or v:match(HOST_PORT)) then
            util.set_upstream_host(v)
          elseif v ~= "" then
            util.log_every("snippet-host", ngx.WARN, "portico: snippet: proxy_set_header Host value is not a host name; not set")
          end
        elseif not op.replaceOnly or ngx.var[util.header_var(name)] ~= nil then
          if v == "" then set(name, nil) else set(name, header_value(v)) end
        end
      end
    end
  end
end

-- The response headers with their values, evaluated now (the request's variables no longer change).
local function response_list(ops, st)
  local out = {}
  for i, op in ipairs(ops) do
    out[i] = { op = op, value = op.value and header_value(eval(op.value, st)) }
  end
  return out
end

-- Applies evaluated response headers to a header table (ngx.header, or the record of a synchronous answer).
-- get(name) / set(name, value) / names() abstract the two.
local function apply(list, status, ctype, get, set, names)
  for _, e in ipairs(list) do
    local op = e.op
    if status_ok(op, status) and type_ok(op, ctype) then
      local name = op.name
      if op.action == "clear" then
        if name:sub(-1) == "*" then
          local prefix = name:sub(1, -2):lower()
          for _, h in ipairs(names()) do
            if h:lower():sub(1, #prefix) == prefix then set(h, nil) end
          end
        else
          set(name, nil)
        end
      elseif op.action == "set" then
        set(name, e.value ~= "" and e.value or nil)
      elseif (op.always or ADD_STATUSES[status]) and e.value ~= "" then
        local cur = get(name)
        if cur == nil then
          set(name, e.value)
        else
          local copy = {}
          if type(cur) == "table" then
            for j = 1, #cur do copy[j] = cur[j] end
          else
            copy[1] = cur
          end
          copy[#copy + 1] = e.value
          set(name, copy)
        end
      end
    end
  end
end

-- The snippet's own answer: recorded for @portico_deny (synchronous run in the router: the response headers are
-- applied to the record here, as @portico_deny has no header filter) or sent at once (access phase: the plugin
-- location's header filter then applies them, like to a backend's answer).
local function answer(a, list)
  local loc = a.location
  if util.in_sync() and #list > 0 then
    local headers, order = {}, {}
    local function get(n)
      local h = headers[n:lower()]
      return h and h[2] or nil
    end
    local function set(n, v)
      local k = n:lower()
      if headers[k] == nil then order[#order + 1] = k end
      headers[k] = v ~= nil and { n, v } or false
    end
    local function names()
      local out = {}
      for _, k in ipairs(order) do
        if headers[k] then out[#out + 1] = headers[k][1] end
      end
      return out
    end
    if loc then set("Location", loc) end
    apply(list, a.status, (loc or a.text == nil) and "" or "text/plain", get, set, names)
    for _, k in ipairs(order) do
      local h = headers[k]
      if h then
        if type(h[2]) == "table" then
          for _, x in ipairs(h[2]) do util.resp_header(h[1], x) end
        else
          util.resp_header(h[1], h[2])
        end
      end
    end
    loc = nil -- recorded above (or removed by the snippet itself)
  elseif #list > 0 then
    keep(list)
  end
  if a.location then return util.deny(a.status, loc and { Location = loc } or nil) end
  if a.text ~= nil or a.status < 300 then return util.answer_raw(a.status, a.text or "") end
  return util.deny(a.status)
end

local function access(self)
  local st = { vars = {}, resp = {}, req = {} }
  local r
  if self.server then
    declare(self.server, st)
    r = run(self.server, st)
  end
  if r ~= "answer" and self.location then
    declare(self.location, st)
    r = run(self.location, st)
  end
  local list = response_list(st.resp, st)
  if r == "answer" then return answer(st.answer, list) end
  request_headers(st.req, st)
  if #list > 0 then keep(list) end
  return false
end

-- auth-snippet (ingress-nginx pastes it into the auth subrequest's location): its statements (set, if and the
-- request-header directives only: check_auth) run just before external-auth's subrequest, and its headers are set
-- through `set(name, value or nil)` on the headers the subrequest copies.
function _M.run_auth(list, set)
  local st = { vars = {}, resp = {}, req = {} }
  declare(list, st)
  run(list, st)
  request_headers(st.req, st, set)
end

local function header_filter()
  local list = take()
  if not list then return end
  local h = ngx.header
  local function names()
    local out = {}
    for k in pairs(ngx.resp.get_headers(0, true)) do out[#out + 1] = k end
    return out
  end
  apply(list, ngx.status, content_type(h["Content-Type"]),
    function(n) return h[n] end, function(n, v) h[n] = v end, names)
end

local function walk(block, f)
  for _, s in ipairs(block or {}) do
    f(s)
    if s.op == "if" then walk(s.body, f) end
  end
end

function _M.new(conf)
  local self = { server = conf.server, location = conf.location, access = access }
  local has_response = false
  for _, block in ipairs({ conf.server or {}, conf.location or {} }) do
    walk(block, function(s)
      if s.op == "response" then has_response = true end
      local re = s.regex or (s.op == "if" and s.cond.regex)
      if re then
        -- Compile once now: a pattern PCRE refuses fails the instance (the engine answers 503 and logs it).
        local _, err = ngx.re.find("", re, "jo")
        if err then error("invalid regex: " .. err) end
      end
    end)
  end
  if has_response then self.header_filter = header_filter end
  return self
end

-- ---- configuration check (validate.lua: the configuration API refuses a push with an invalid instance) ----
-- The compiled ingress-nginx snippets (SnippetStatement, reconcilers/config/types.ts).
local C = require("portico.check")
local cjson = require("cjson.safe")
local str, is_int, is_array, array_of, bool_or_nil, compiles = C.str, C.is_int, C.is_array, C.array_of, C.bool_or_nil, C.compiles
local VALUE, FRAMING, REDIRECT_STATUS = C.VALUE, C.FRAMING, C.REDIRECT_STATUS
-- The request variables a snippet may read (the same allowlist as reconcilers/annotations/snippets.ts).
local SNIPPET_VARS = { host = true, uri = true, document_uri = true, request_uri = true, args = true, query_string = true,
  is_args = true, scheme = true, https = true, remote_addr = true, request_method = true, server_name = true,
  server_protocol = true, content_type = true, content_length = true }
local SNIPPET_NAME = "^[a-z_][a-z0-9_]*$"
local SNIPPET_HEADER = "^[!#%$%%&'%*%+%.%^_`|~%w%-]+$"
local SNIPPET_TYPE = "^[%w!#%$&%^_%.%+%-]+/[%w!#%$&%^_%.%+%*%-]+$"

local function snippet_var(name)
  if type(name) ~= "string" or #name > 140 then return false end
  if SNIPPET_VARS[name] then return true end
  local rest = name:match("^http_(.+)$") or name:match("^arg_(.+)$") or name:match("^cookie_(.+)$")
  return rest ~= nil and #rest <= 128 and rest:match("^[a-z0-9_]+$") ~= nil
end

-- A value: parts that are literal text (printable ASCII and tab; `text` also allows newlines), or { v = variable },
-- { c = 1..9 }, { s = snippet variable }.
local function snippet_value(v, text)
  if not is_array(v) or #v > 256 then return false end
  for _, p in ipairs(v) do
    if type(p) == "string" then
      if #p > 4096 or not p:match(text and "^[\t\n\32-\126]*$" or VALUE) then return false end
    elseif type(p) == "table" then
      local n = 0
      for _ in pairs(p) do n = n + 1 end
      if n ~= 1 then return false end
      if p.v ~= nil then
        if not snippet_var(p.v) then return false end
      elseif p.c ~= nil then
        if not is_int(p.c, 1, 9) then return false end
      elseif p.s ~= nil then
        if not str(p.s, 64, SNIPPET_NAME) then return false end
      else
        return false
      end
    else
      return false
    end
  end
  return true
end

local function snippet_header(name, wildcard)
  if type(name) ~= "string" then return false end
  local base = name
  if wildcard and name:sub(-1) == "*" then base = name:sub(1, -2) end
  if not str(base, 128, SNIPPET_HEADER) or base:find("*", 1, true) then return false end
  local lower = base:lower()
  if base ~= name then
    for f in pairs(FRAMING) do
      if f:sub(1, #lower) == lower then return false end
    end
    return true
  end
  return not FRAMING[lower] and lower ~= "upgrade" and lower ~= "te" and lower ~= "trailer"
end

local function snippet_regex(r) return str(r, 1024, "^[\32-\126]+$") and compiles(r) end

local function snippet_block(list, depth, count)
  if not is_array(list) then return "a block must be an array" end
  for i, s in ipairs(list) do
    count[1] = count[1] + 1
    if count[1] > 256 then return "more than 256 statements" end
    local at = "statement " .. i .. ": "
    if type(s) ~= "table" then return at .. "not an object" end
    local op = s.op
    if op == "set" then
      if not str(s.name, 64, SNIPPET_NAME) or SNIPPET_VARS[s.name] or snippet_var(s.name) then return at .. "invalid variable name" end
      if not snippet_value(s.value) then return at .. "invalid value" end
    elseif op == "return" then
      if not is_int(s.status, 200, 599) or s.status == 444 then return at .. "status must be 200-599" end
      if s.location ~= nil and (not REDIRECT_STATUS[s.status] and s.status ~= 302 or not snippet_value(s.location)) then return at .. "invalid redirect" end
      if s.text ~= nil and (s.location ~= nil or not snippet_value(s.text, true)) then return at .. "invalid text" end
    elseif op == "rewrite" then
      if not snippet_regex(s.regex) then return at .. "the regex does not compile" end
      if not snippet_value(s.path) or (s.args ~= nil and not snippet_value(s.args)) then return at .. "invalid replacement" end
      if type(s.keepArgs) ~= "boolean" or type(s.stop) ~= "boolean" then return at .. "keepArgs and stop must be booleans" end
      if s.redirect ~= nil and s.redirect ~= 301 and s.redirect ~= 302 then return at .. "redirect must be 301 or 302" end
    elseif op == "break" then
      -- nothing else
    elseif op == "if" then
      if depth > 0 then return at .. "if blocks do not nest" end
      local c = s.cond
      if type(c) ~= "table" then return at .. "invalid condition" end
      if c.test == "nonempty" then
        if not snippet_value(c.value) then return at .. "invalid condition" end
      elseif c.test == "eq" or c.test == "ne" then
        if not snippet_value(c.left) or not snippet_value(c.right) then return at .. "invalid condition" end
      elseif c.test == "match" then
        if not snippet_value(c.left) or not snippet_regex(c.regex) then return at .. "the condition's regex does not compile" end
        if type(c.caseless) ~= "boolean" or type(c.negate) ~= "boolean" then return at .. "invalid condition" end
      else
        return at .. "unknown condition"
      end
      local err = snippet_block(s.body, depth + 1, count)
      if err then return at .. err end
    elseif op == "response" or op == "request" then
      local a = s.action
      if a ~= "set" and a ~= "clear" and not (op == "response" and a == "add") then return at .. "invalid action" end
      if not snippet_header(s.name, a == "clear") then return at .. "invalid or protected header name" end
      if op == "request" and (s.name:lower() == "expect" or (s.name:lower() == "host" and (a ~= "set" or s.name ~= "host"))) then return at .. "header " .. s.name .. " cannot be changed" end
      if a ~= "clear" and not snippet_value(s.value) then return at .. "invalid value" end
      if s.statuses ~= nil and not array_of(s.statuses, 64, function(x) return is_int(x, 100, 599) end) then return at .. "invalid statuses" end
      if s.types ~= nil and not array_of(s.types, 64, function(x) return str(x, 129, SNIPPET_TYPE) end) then return at .. "invalid types" end
      if not bool_or_nil(s.always) or not bool_or_nil(s.replaceOnly) then return at .. "always / replaceOnly must be booleans" end
    else
      return at .. "unknown op " .. cjson.encode(tostring(op):sub(1, 20))
    end
  end
end

-- What an auth-snippet may hold beyond snippet_block's rules (reconcilers/annotations/snippets.ts, kind "auth"):
-- set, if and request headers only, Host never set, and not the auth location's own URI or query variables.
local AUTH_OPS = { set = true, ["if"] = true, request = true }
local AUTH_LOCATION_VARS = { uri = true, document_uri = true, args = true, query_string = true, is_args = true }
local function auth_value(v)
  if v == nil then return true end
  for _, p in ipairs(v) do
    if type(p) == "table" and p.v ~= nil and (AUTH_LOCATION_VARS[p.v] or p.v:match("^arg_")) then return false end
  end
  return true
end
local function auth_block(list)
  for i, s in ipairs(list) do
    local at = "statement " .. i .. ": "
    if not AUTH_OPS[s.op] then return at .. s.op .. " does not apply to the auth subrequest" end
    if s.op == "request" then
      local l = s.name:lower()
      if l == "host" or l == "proxy-connection" then return at .. "header " .. s.name .. " cannot be set on the auth subrequest" end
    end
    local c = s.cond or {}
    if not (auth_value(s.value) and auth_value(c.value) and auth_value(c.left) and auth_value(c.right)) then
      return at .. "reads a variable of the auth location's own URI or query"
    end
    if s.op == "if" then
      local err = auth_block(s.body)
      if err then return at .. err end
    end
  end
end

-- An auth-snippet (external-auth's ingressNginx.snippet): nil when valid, else a message.
function _M.check_auth(list)
  local err = snippet_block(list, 0, { 0 })
  if err then return err end
  return auth_block(list)
end

-- The snippet fields of a PluginInstance (reconcilers/config/types.ts): nil when valid, else a message.
function _M.check(p)
  if p.server == nil and p.location == nil then return "nothing to run" end
  local count = { 0 }
  for _, what in ipairs({ "server", "location" }) do
    if p[what] ~= nil then
      local err = snippet_block(p[what], 0, count)
      if err then return what .. ": " .. err end
    end
  end
end

return _M
