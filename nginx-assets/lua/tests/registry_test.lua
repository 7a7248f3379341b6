-- The plugin registry (portico/plugins/registry.lua): a plugin is one module plus one line in the registry. A test
-- module added by inserting one line into the real registry's text runs in the engine in its order, is checked by
-- validate.lua with its own check, gets its log hook; a registry whose order does not ascend refuses to load.
local here = arg[1]
package.path = here .. "/?.lua;" .. here .. "/tests/?.lua;/usr/share/lua/5.1/?.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath
local mock = require("mock_ngx")
local R = mock.reporter()

local f = assert(io.open(here .. "/portico/plugins/registry.lua"))
local source = f:read("*a")
f:close()

-- The registry with `line` inserted before the snippet's line, loaded as portico.plugins.registry.
local function registry_with(line)
  local text, n = source:gsub('\n(  "portico%.plugins%.snippet",)', "\n" .. line .. "\n%1", 1)
  assert(n == 1, "the registry lists portico.plugins.snippet")
  local chunk = assert(loadstring(text, "=registry.lua"))
  return pcall(chunk)
end

local logged = 0
package.preload["portico.plugins.stamp"] = function()
  local M = { name = "stamp", order = 12.5 }
  local function access(self)
    ngx.req.set_header("x-stamp", self.value .. "|" .. (ngx.var.uri or ""))
    return false
  end
  function M.new(conf) return { value = conf.value, access = access } end
  function M.check(p)
    if type(p.value) ~= "string" or #p.value == 0 then return "value must be a non-empty string" end
  end
  function M.log() logged = logged + 1 end
  return M
end

do
  local T = mock.fresh()
  local ok, reg = registry_with('  "portico.plugins.stamp",')
  R.check("registry: one added line loads the new module", ok and reg.by_name.stamp ~= nil, reg)
  package.loaded["portico.plugins.registry"] = reg
  local validate = require("portico.validate")
  R.check("registry: validate.lua checks the new type with the module's check",
    validate.plugin("s1", { name = "ns/s1", type = "stamp", value = "v" }) == nil
      and validate.plugin("s1", { name = "ns/s1", type = "stamp" }) == "plugin s1 (stamp): value must be a non-empty string")
  R.check("registry: satisfyAny only on a module that declares satisfy_any",
    validate.plugin("s1", { name = "ns/s1", type = "stamp", value = "v", satisfyAny = true }) ~= nil)
  local store = require("portico.store")
  assert(store.apply_all({ p = { upsert = {
    st = { name = "ns/st", type = "stamp", value = "v" },
    rw = { name = "ns/rw", type = "rewrite", path = "/new" },
  } } }))
  local engine = require("portico.plugins")
  T.headers = {}
  T.ngx.ctx = {}
  T.ngx.var.portico_plugins = "st,rw"
  T.ngx.var.uri = "/old"
  engine.access()
  R.check("registry: the engine runs the new plugin in its order (after rewrite)", T.headers["x-stamp"] == "v|/new", T.headers["x-stamp"])
  engine.log()
  R.check("registry: the module's log hook runs in the log phase", logged == 1, logged)
end

do
  mock.fresh()
  package.preload["portico.plugins.early"] = function()
    return { name = "early", order = 1, new = function() return {} end, check = function() end }
  end
  local ok, err = registry_with('  "portico.plugins.early",')
  R.check("registry: a module whose order does not ascend down the list is refused", not ok and tostring(err):find("order must ascend", 1, true) ~= nil, err)
  mock.fresh()
  package.preload["portico.plugins.nameless"] = function() return { order = 20, new = function() return {} end } end
  ok, err = registry_with('  "portico.plugins.nameless",')
  R.check("registry: a module without name or check is refused", not ok and tostring(err):find("must declare name, order, new and check", 1, true) ~= nil, err)
end

R.done()
