-- The plugins: one line each, in the order they run. The engine (plugins.lua) and the configuration check
-- (validate.lua) know plugins only through this list. The list is generated (tools/plugins.ts, `make plugins`)
-- from the modules of this folder that declare `_M.name = "..."` and `_M.order = N` on lines of their own, as is
-- the TypeScript side's list (reconcilers/config/plugins/index.ts: PLUGIN_ORDER, PluginInstance, the Plugin CRD's
-- types), so adding a plugin is adding its module here and its TypeScript module,
-- reconcilers/config/plugins/<name>.ts, then `make plugins` (tools/plugins.test.ts fails until then).
--
-- A plugin is one module under portico/plugins/ (named after its type, "-" written "_") that declares:
--   name            its type (PluginInstance.type in reconcilers/config/types.ts);
--   order           its place in every chain: this list is sorted by it (ties are not allowed);
--   new(conf, id)   compiles an instance (once per worker, when a request first needs it): a table with
--                   access(self, ctx) — true when it answered, which ends the chain — and/or header_filter(self, ctx);
--   check(conf)     its fields as the configuration API accepts them: nil when valid, else a message;
-- and, when they apply:
--   auth            it identifies the client: a consumer's own plugins replace or join only the plugins after the
--                   last auth plugin;
--   satisfy_any     it may be flagged satisfyAny (ingress-nginx's `satisfy any`);
--   async           it must run in the access phase (it yields): a chain with it is not run in the router;
--   release()       run in the log phase of every plugin location and of @portico_deny (give back what it holds);
--   log()           run in the log phase of every plugin location.
-- Everything here is resolved when the module is loaded (the master, in init_by_lua): requests only read the tables.
-- Generated: every module here declaring _M.name and _M.order, by order (tools/plugins.ts, `make plugins`).
local MODULES = {
  "portico.plugins.client_cert",      -- client-cert
  "portico.plugins.ip_restriction",   -- ip-restriction
  "portico.plugins.cors",             -- cors
  "portico.plugins.key_auth",         -- key-auth
  "portico.plugins.basic_auth",       -- basic-auth
  "portico.plugins.digest_auth",      -- digest-auth
  "portico.plugins.external_auth",    -- external-auth
  "portico.plugins.conn_limit",       -- conn-limit
  "portico.plugins.rate_limit",       -- rate-limit
  "portico.plugins.request_headers",  -- request-headers
  "portico.plugins.response_headers", -- response-headers
  "portico.plugins.redirect",         -- redirect
  "portico.plugins.rewrite",          -- rewrite
  "portico.plugins.snippet",          -- snippet
}

local _M = {
  list = {},    -- the modules, in order
  by_name = {}, -- type name -> module
}

for i, path in ipairs(MODULES) do
  local m = require(path)
  if type(m.name) ~= "string" or type(m.order) ~= "number" or type(m.new) ~= "function" or type(m.check) ~= "function" then
    error("portico: plugin module " .. path .. " must declare name, order, new and check")
  end
  if _M.by_name[m.name] then error("portico: two plugin modules are named " .. m.name) end
  local prev = _M.list[i - 1]
  if prev and prev.order >= m.order then error("portico: plugin " .. m.name .. ": order must ascend down the registry") end
  _M.list[i], _M.by_name[m.name] = m, m
end

return _M
