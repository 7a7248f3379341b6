-- Loaded once per nginx configuration (init_by_lua, in the master): remembers which configuration generation is
-- running, where the internal 503 socket is and which directive profiles nginx.conf has, and marks fresh
-- shared-memory zones with a new epoch.
local _M = { checksum = "" }

function _M.init(opts)
  _M.checksum = opts.checksum or ""
  -- Pre-load modules in the master so workers share the compiled code.
  require("portico.shm").init_epochs()
  require("portico.peers")
  require("portico.store")
  require("portico.rr")
  require("portico.chash")
  require("portico.ewma")
  require("portico.balancer").configure({ unavailable = opts.unavailable })
  require("portico.router").configure({ profiles = opts.profiles, httpsRedirectCode = opts.httpsRedirectCode, gatewayPorts = opts.gatewayPorts, gatewayTls = opts.gatewayTls, gatewayListeners = opts.gatewayListeners, gatewayFilters = opts.gatewayFilters })
  -- OpenTelemetry (tracing.lua): configured only when the ConfigMap names a collector.
  require("portico.tracing").configure(type(opts.tracing) == "table" and opts.tracing or {})
  require("portico.errors")
  -- Gateway listeners without a hostname have a certificate for their port: looked up only when Gateway ports exist.
  require("portico.certs").port_defaults = type(opts.gatewayPorts) == "table" and #opts.gatewayPorts > 0
  -- Client certificates on a Gateway port are the port's (spec.tls.frontend), never a server name's.
  local gateway_ports = {}
  for _, p in ipairs(type(opts.gatewayPorts) == "table" and opts.gatewayPorts or {}) do gateway_ports[p] = true end
  require("portico.certs").gateway_ports = gateway_ports
  require("portico.validate")
  require("portico.api")
end

return _M
