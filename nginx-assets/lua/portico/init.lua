-- Loaded once per nginx configuration (init_by_lua): remembers which configuration generation is running.
local _M = { checksum = "" }

function _M.init(opts)
  _M.checksum = opts.checksum or ""
  -- Pre-load modules in the master so workers share the compiled code.
  require("portico.store")
  require("portico.rr")
  require("portico.chash")
  require("portico.ewma")
  require("portico.balancer")
  require("portico.certs")
  require("portico.api")
end

return _M
