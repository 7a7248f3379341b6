-- custom-http-errors: a route's profile sends the errors it lists to `location @portico_err_<code>` (error_page),
-- which sets $portico_error_code and calls page(). With a default-backend the request goes on to @portico_errors,
-- proxied there with the X-* headers ingress-nginx sends its error backend; without one, nginx's own page for the
-- code is the answer. What the route is comes from $portico_error_route, set by the router:
-- "<default backend id>\t<namespace>\t<ingress>\t<service>\t<port>" (validated when the routes were stored).
local _M = {}

function _M.page()
  local var = ngx.var
  local code = tonumber(var.portico_error_code) or 500
  local id, ns, ing, svc, port = (var.portico_error_route or ""):match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)$")
  if not id or id == "" then return ngx.exit(code) end
  var.portico_backend = id
  var.portico_upstream_name = "" -- the access log's $proxy_upstream_name is derived from the default backend (http.hbs)
  var.portico_timeouts = "" -- the route's own timeouts are its backend's; the default backend gets the global ones
  -- The router's hand-off to the balancer named the route's backend: the balancer reads the variables now.
  require("portico.balancer").forget()
  var.portico_error_namespace = ns
  var.portico_error_ingress = ing
  var.portico_error_service = svc
  var.portico_error_port = port
  return ngx.exec("@portico_errors")
end

return _M
