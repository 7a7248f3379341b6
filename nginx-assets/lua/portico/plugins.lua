-- The plugin engine. Routes with plugins are sent by the router to the plugin location (@portico_lua, or a
-- directive profile's location) with $portico_plugins = the route's plugin ids joined by ",". There:
--   access()         runs the access handlers in the fixed order (the plugin modules' `order`, as listed in
--                    portico/plugins/registry.lua: client-cert, ip-restriction, cors, key-auth, basic-auth,
--                    digest-auth, external-auth, conn-limit, rate-limit, request-headers, response-headers, redirect, rewrite,
--                    snippet; re-sorted here whatever order the ids arrive in, ties kept in route order); a handler
--                    that answers (401, 429, a redirect...) ends the chain;
--   header_filter()  runs the response-header handlers (cors, response-headers), on Portico's own answers too;
--   log()            runs the plugin modules' release and log hooks, feeds the balancer's EWMA latencies and
--                    passive health (a location-level log handler replaces the http-level one).
-- Plugin instances are data (store "p:<id>"): each worker compiles an instance when a request first needs it and
-- a chain per distinct id string, and drops both when one of its plugins changes. An id the store does not have
-- (or an instance that cannot be compiled) fails the request closed: 503, and an error log line naming it.
--
-- Consumers: an auth plugin that identifies a consumer sets ngx.ctx.portico_consumer ({ ns, name, username,
-- plugins }). The consumer's own plugins (ConsumerEntry.plugins) then apply to the rest of the chain: one of the
-- same type replaces the route's, one of a type the route lacks is added in its place in the order; those of a
-- type that runs before or with auth (ip-restriction, cors, the auth plugins) are ignored.
local store = require("portico.store")
local util = require("portico.plugins.util")
local registry = require("portico.plugins.registry")

local _M = {}

-- From the plugin modules (registry.lua), once when this module is loaded.
local PLUGINS = registry.by_name -- type -> module
local ORDER = {}                 -- type -> order
-- Plugin types that need the access phase (a subrequest yields); every other chain runs synchronously in the
-- router (run_sync).
local ASYNC = {}
-- The order of the last auth plugin: a consumer's own plugins of a type up to it are ignored, and only plugins up to
-- it may be flagged satisfyAny.
local LAST_AUTH = -math.huge
-- Hooks of the log phase (release: also in @portico_deny's).
local RELEASE, LOG = {}, {}
for _, m in ipairs(registry.list) do
  ORDER[m.name] = m.order
  if m.async then ASYNC[m.name] = true end
  if m.auth and m.order > LAST_AUTH then LAST_AUTH = m.order end
  if m.release then RELEASE[#RELEASE + 1] = m.release end
  if m.log then LOG[#LOG + 1] = m.log end
end
_M.ORDER = ORDER

local instances = {} -- plugin id -> compiled instance, or false (cannot be compiled; cleared when it changes)
local chains = {}    -- "$portico_plugins" value -> { steps, filters } or { missing = id, why }
local users = {}     -- plugin id -> { [chain string] = true }: the chains to drop when the plugin changes

local filter_lists = {} -- "$portico_filters" value -> instances (header_filter after a synchronous run)

-- Plugin types that identify consumers (whose own plugins join the chain after them).
local AUTH = {}
for _, m in ipairs(registry.list) do
  if m.auth then AUTH[m.name] = true end
end
-- Instances that yield although their type does not (a rate-limit with policy "redis": Redis over cosockets).
-- While any is stored, a chain with an auth plugin runs in the access phase too: the consumer it identifies may
-- bring such a plugin of its own, which the router's synchronous run could not call.
local yielding, n_yielding = {}, 0

store.on_plugins(function(id, present)
  instances[id] = nil
  filter_lists = {}
  local u = users[id]
  if u then
    for s in pairs(u) do chains[s] = nil end
    users[id] = nil
  end
  local y = present and store.plugin_has(id, '"policy":"redis"') or nil
  if y ~= yielding[id] then
    yielding[id] = y
    local before = n_yielding
    n_yielding = n_yielding + (y and 1 or -1)
    if (before == 0) ~= (n_yielding == 0) then chains, users = {}, {} end
  end
end)

-- A compiled instance: the module's table plus id, type, order, name. nil, why when it cannot be had.
local function instance(id)
  local inst = instances[id]
  if inst then return inst end
  if inst == false then return nil, "cannot be compiled" end
  local conf = store.get_plugin(id)
  if not conf then return nil, "is not programmed" end
  local mod = PLUGINS[conf.type]
  local order = mod and mod.order
  local ok, res
  if mod then
    ok, res = pcall(mod.new, conf, id)
  else
    ok, res = false, "unknown type " .. tostring(conf.type)
  end
  if not ok or type(res) ~= "table" then
    instances[id] = false
    ngx.log(ngx.ERR, "portico: plugin ", id, " cannot be compiled: ", tostring(res))
    return nil, "cannot be compiled"
  end
  res.id, res.type, res.order, res.name = id, conf.type, order, conf.name or id
  res.satisfy_any = conf.satisfyAny == true and order <= LAST_AUTH or nil
  instances[id] = res
  return res
end
_M.instance = instance

local function by_order(list)
  local keyed = {}
  for i = 1, #list do keyed[i] = { list[i], i } end
  table.sort(keyed, function(a, b)
    if a[1].order ~= b[1].order then return a[1].order < b[1].order end
    return a[2] < b[2]
  end)
  for i = 1, #keyed do list[i] = keyed[i][1] end
  return list
end

local function filters_of(steps, out)
  out = out or {}
  for i = 1, #steps do
    if steps[i].header_filter then out[#out + 1] = steps[i] end
  end
  return out
end

local byte, sub = string.byte, string.sub
local function compile(s)
  local chain
  local steps = {}
  -- A chain written "=id,id" (Gateway API listener filters) runs in the order given: never re-sorted.
  local fixed = byte(s, 1) == 61
  for id in (fixed and sub(s, 2) or s):gmatch("[^,%s]+") do
    local u = users[id]
    if not u then u = {}; users[id] = u end
    u[s] = true
    local inst, why = instance(id)
    if inst then
      steps[#steps + 1] = inst
    elseif not chain then
      chain = { missing = id, why = why }
    end
  end
  if not chain then
    if not fixed then by_order(steps) end
    local sync = true
    for i = 1, #steps do
      local t = steps[i].type
      if ASYNC[t] or steps[i].async or (n_yielding > 0 and AUTH[t]) then sync = false end
    end
    local filters = filters_of(steps)
    local fids = {}
    for i = 1, #filters do fids[i] = filters[i].id end
    local any = 0
    for i = 1, #steps do
      if steps[i].satisfy_any then any = any + 1 end
    end
    chain = { steps = steps, filters = filters, sync = sync, filter_ids = #fids > 0 and table.concat(fids, ",") or nil,
      any = any > 1 and any or nil, fixed = fixed or nil }
  end
  chains[s] = chain
  return chain
end

-- The rest of a chain after step i once a consumer with its own plugins is known. nil, id, why when one of the
-- consumer's plugins cannot be had.
local function with_consumer(steps, i, consumer, fixed)
  local own, types = {}, {}
  for _, id in ipairs(consumer.plugins) do
    local inst, why = instance(id)
    if not inst then return nil, id, why end
    if inst.order > LAST_AUTH then
      own[#own + 1] = inst
      types[inst.type] = true
    end
  end
  local out = {}
  for j = 1, i do out[j] = steps[j] end
  local tail = {}
  for j = i + 1, #steps do
    if not types[steps[j].type] then tail[#tail + 1] = steps[j] end
  end
  -- (A chain in a fixed order keeps its own steps in it; the consumer's plugins come after them.)
  if fixed then by_order(own) end
  for _, inst in ipairs(own) do tail[#tail + 1] = inst end
  if not fixed then by_order(tail) end
  for _, inst in ipairs(tail) do out[#out + 1] = inst end
  return out
end

local function unavailable(id, why)
  util.log_every("missing:" .. id, ngx.ERR, "portico: plugin ", id, " ", why or "is not programmed",
    "; answering 503")
  return util.deny(503)
end

-- ingress-nginx's `satisfy any`: the access handlers of an Ingress with that annotation (its allow/deny list, basic
-- or digest auth, external auth; flagged satisfy_any) let the request through as soon as one of them does, like nginx's
-- access phase: each refusal (401, 403, or external auth's sign-in redirect) is kept and the next handler is tried;
-- when every one refused, the request gets a 401-class answer if there was one, else the 403. Any other answer
-- (a 500 of the auth service, 429, 503) ends the chain as it would with `satisfy all`. A chain with fewer than two
-- flagged handlers runs as usual (chain.any = nil).
local function step(inst, ctx, st)
  if not (st and inst.satisfy_any) then return inst.access and inst:access(ctx) end
  if st.passed then return false end
  local rec = util.capture_begin()
  local refused = inst:access(ctx)
  util.capture_end(rec)
  if not refused then
    st.passed = true
    return false
  end
  local s = rec.status
  if s ~= 401 and s ~= 403 and s ~= 302 then return util.replay(rec) end
  if not st.best or (st.best.status == 403 and s ~= 403) then st.best = rec end
  st.left = st.left - 1
  if st.left == 0 then return util.replay(st.best) end
  return false
end

-- Returns true when the request was answered (refused, redirected...).
function _M.access()
  local ids = ngx.var.portico_plugins
  if ids == nil or ids == "" then return end
  store.sync()
  local chain = chains[ids] or compile(ids)
  if chain.missing then return unavailable(chain.missing, chain.why) end
  local ctx = ngx.ctx
  local steps = chain.steps
  ctx.portico_filters = chain.filters
  local consumer
  local st = chain.any and { left = chain.any }
  local i, n = 1, #steps
  while i <= n do
    local inst = steps[i]
    if step(inst, ctx, st) then return true end
    local c = ctx.portico_consumer
    if c ~= consumer then
      consumer = c
      if c and c.plugins and #c.plugins > 0 then
        local merged, missing, why = with_consumer(steps, i, c, chain.fixed)
        if not merged then return unavailable(missing, "(of consumer " .. c.ns .. "/" .. tostring(c.name) .. ") " .. why) end
        steps, n = merged, #merged
        ctx.portico_filters = filters_of(steps)
      end
    end
    i = i + 1
  end
end

-- The instances with a response-header handler among "id,id" plugin ids, compiled once per distinct list.
local function header_filters_of(ids)
  local l = filter_lists[ids]
  if not l then
    l = {}
    for id in ids:gmatch("[^,]+") do
      local inst = instance(id)
      if inst and inst.header_filter then l[#l + 1] = inst end
    end
    filter_lists[ids] = l
  end
  return l
end

-- A Gateway listener's own response-header handlers ($portico_lfilters: its filters ran before the route's, see
-- router.lua), run after the route's.
local function listener_filters(ctx)
  local lf = ngx.var.portico_lfilters
  if lf == nil or lf == "" then return end
  local l = header_filters_of(lf)
  for i = 1, #l do l[i]:header_filter(ctx) end
end

-- Response-header handlers: those the access phase chose (ngx.ctx), or, after a synchronous run in the router,
-- the plugin ids it left in $portico_filters.
function _M.header_filter()
  local ctx = ngx.ctx
  local f = ctx.portico_filters
  if not f then
    local ids = ngx.var.portico_filters
    if ids == nil or ids == "" then return listener_filters(ctx) end
    f = header_filters_of(ids)
  end
  for i = 1, #f do f[i]:header_filter(ctx) end
  return listener_filters(ctx)
end

-- ---- synchronous run, from the router's set_by_lua handler -----------------------------------------------------
-- Chains without a plugin that must yield run right where the route is found: no access-phase coroutine and, when
-- no response header is to be changed, no jump at all (the request is proxied from `location /`). A refusal is
-- recorded by util (begin_sync/end_sync) and sent by the @portico_deny location (answer()).
local function clean(v) return (tostring(v):gsub("[%c]", " ")) end
-- A body sent exactly as given (util.answer_raw): "%" and control characters percent-encoded for the one-line slot.
local function enc(v) return (tostring(v):gsub("[%%%c]", function(c) return string.format("%%%02X", c:byte()) end)) end
local function dec(v) return (v:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)) end

local function deny_jump(p)
  local head = tostring(p.status or 500)
  local body
  if p.raw then
    head, body = head .. " raw", enc(p.body or "")
  else
    body = p.body and clean(p.body) or ""
  end
  local out = { head, body }
  for _, h in ipairs(p.headers or {}) do out[#out + 1] = clean(h[1]) .. "\t" .. clean(h[2]) end
  ngx.var.portico_deny = table.concat(out, "\n")
  return "@portico_deny"
end

-- Returns "async" (the chain needs the access phase: set $portico_plugins and go to the plugin location), a jump
-- target to answer with (the request is refused, redirected or a preflight), or nil and the plugin ids whose
-- response-header handlers must run (nil when none).
function _M.run_sync(ids)
  local chain = chains[ids] or compile(ids)
  if chain.missing then
    util.begin_sync()
    unavailable(chain.missing, chain.why)
    return deny_jump(util.end_sync())
  end
  if not chain.sync then return "async" end
  local ctx = {}
  local steps = chain.steps
  local consumer, merged
  local st = chain.any and { left = chain.any }
  util.begin_sync()
  local i, n = 1, #steps
  while i <= n do
    local inst = steps[i]
    if step(inst, ctx, st) then return deny_jump(util.end_sync()) end
    local c = ctx.portico_consumer
    if c ~= consumer then
      consumer = c
      if c and c.plugins and #c.plugins > 0 then
        local m, missing, why = with_consumer(steps, i, c, chain.fixed)
        if not m then
          unavailable(missing, "(of consumer " .. c.ns .. "/" .. tostring(c.name) .. ") " .. why)
          return deny_jump(util.end_sync())
        end
        steps, n, merged = m, #m, true
      end
    end
    i = i + 1
  end
  util.end_sync()
  if not merged then return nil, chain.filter_ids end
  local fids = {}
  for _, inst in ipairs(filters_of(steps)) do fids[#fids + 1] = inst.id end
  return nil, #fids > 0 and table.concat(fids, ",") or nil
end

-- content handler of @portico_deny: sends what run_sync recorded in $portico_deny.
function _M.answer()
  local d = ngx.var.portico_deny or ""
  local head, body, rest = d:match("^([^\n]*)\n([^\n]*)\n?(.*)$")
  local status = tonumber(head and head:match("^(%d+)")) or 500
  ngx.status = status
  local h = ngx.header
  local seen = {}
  for line in (rest or ""):gmatch("[^\n]+") do
    local name, value = line:match("^([^\t]+)\t(.*)$")
    if name then
      -- A name recorded twice (the snippet's add_header) keeps both values.
      local k = name:lower()
      local prev = seen[k]
      if prev then
        if type(prev) ~= "table" then prev = { prev } end
        prev[#prev + 1] = value
        seen[k] = prev
        h[name] = prev
      else
        seen[k] = value
        h[name] = value
      end
    end
  end
  if head and head:find(" raw", 1, true) then
    if h["Content-Type"] == nil then h["Content-Type"] = "text/plain" end
    ngx.print(dec(body or ""))
    return ngx.exit(ngx.HTTP_OK)
  end
  if body == nil or body == "" then return ngx.exit(status) end
  h["Content-Type"] = "text/plain; charset=utf-8"
  h["Cache-Control"] = "no-store"
  ngx.print(body, "\n")
  return ngx.exit(ngx.HTTP_OK)
end

local balancer = require("portico.balancer")
local health -- portico.health (passive health checking), when that module exists; false when it does not
-- (balancer.log reports to health.log as well; health.log counts a request once, so the second call is a no-op.)
-- What the plugins hold for this request (conn-limit's slot), given back: a no-op when they hold nothing.
local function release()
  for i = 1, #RELEASE do RELEASE[i]() end
end
-- OpenTelemetry: these handlers replace the server-level log handler in their locations, so they end the request's
-- span themselves (a no-op without tracing).
local tracing_log = require("portico.tracing").log
function _M.release()
  release()
  tracing_log()
end

function _M.log()
  release()
  balancer.log()
  -- E.g. a snippet's response headers waiting for a header filter that never ran (the request ended first).
  for i = 1, #LOG do LOG[i]() end
  if health == nil then
    local ok, m = pcall(require, "portico.health")
    health = ok and type(m) == "table" and type(m.log) == "function" and m or false
  end
  if health then health.log() end
  tracing_log()
end

-- For tests.
function _M._chains() return chains end
function _M._instances() return instances end

return _M
