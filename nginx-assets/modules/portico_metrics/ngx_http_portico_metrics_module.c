/*
 * Portico's per-request metrics, counted inside nginx at C speed.
 *
 * ingress-nginx's per-request metrics (nginx_ingress_controller_requests and the request / response / upstream
 * duration and size histograms) need, for every request, a series lookup and about thirty counter updates. Done in
 * a Lua log phase that cost about 10,000 instructions per request (18 % of a proxied request); here it is a log
 * phase handler that reads nginx's own request fields (no variable is formatted and parsed back) and adds to a
 * series in a shared memory zone, under the zone's lock.
 *
 * A series is (labels, status, method). The labels are the value of the key variable ($portico_mk: the router
 * writes the route's namespace, name, Service, path and host as the controller wrote them, and the balancer
 * appends a canary backend), so a client cannot mint label values; a method outside the known list counts as
 * OTHER. A request with an empty key matched no host: it is counted under the catch-all host "_" only when
 * portico_metrics_undefined_hosts is on.
 *
 * Slots of a series (the layout metrics.lua had and reconcilers/nginx-driver/compat-metrics.ts reads; numbered from
 * 1 in the dump): 1 = requests, then per histogram, in the order of HISTOGRAMS below, its sum, its count and one
 * count per bucket (not cumulative; the last is +Inf). Durations are summed in milliseconds (nginx measures them
 * in milliseconds) and dumped in seconds.
 *
 * Directives:
 *   portico_metrics_zone size;                    http: the shared zone (kept across reloads; emptied when the
 *                                                 bucket layout changes)
 *   portico_metrics_key $variable;                http: the series labels
 *   portico_metrics_buckets time|length|size b1 b2 ...;   http: the upper bounds of a bucket set, ascending
 *   portico_metrics_undefined_hosts on|off;       http
 *   portico_metrics on|off;                       http, server, location: count the requests logged here
 *   portico_metrics_dump;                         location: answer with every non-zero slot, one per line:
 *                                                 "labels\x1fstatus\x1fmethod\x1fslot\tvalue"
 * Variable: $portico_metrics_dropped, the number of series that found no room in the zone (each is logged once per
 * worker and minute at most).
 */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


#define PM_HISTOGRAMS   7
#define PM_SETS         3
#define PM_MAX_BOUNDS   64
#define PM_SEP          '\x1f'

/* The histograms, in slot order: what each measures and which bucket set it uses. */
enum { PM_REQUEST_TIME, PM_RESPONSE_TIME, PM_HEADER_TIME, PM_CONNECT_TIME, PM_REQUEST_LENGTH, PM_RESPONSE_SIZE,
       PM_BYTES_SENT };
enum { PM_SET_TIME, PM_SET_LENGTH, PM_SET_SIZE };

static const ngx_uint_t  pm_set_of[PM_HISTOGRAMS] = {
    PM_SET_TIME, PM_SET_TIME, PM_SET_TIME, PM_SET_TIME, PM_SET_LENGTH, PM_SET_SIZE, PM_SET_SIZE
};

/* The methods nginx knows (r->method, one bit each: NGX_HTTP_GET ... NGX_HTTP_CONNECT), by bit number; everything
 * else (NGX_HTTP_UNKNOWN, bit 0) is OTHER. */
static ngx_str_t  pm_methods[] = {
    ngx_string("OTHER"), ngx_string("GET"), ngx_string("HEAD"), ngx_string("POST"), ngx_string("PUT"),
    ngx_string("DELETE"), ngx_string("MKCOL"), ngx_string("COPY"), ngx_string("MOVE"), ngx_string("OPTIONS"),
    ngx_string("PROPFIND"), ngx_string("PROPPATCH"), ngx_string("LOCK"), ngx_string("UNLOCK"), ngx_string("PATCH"),
    ngx_string("TRACE"), ngx_string("CONNECT")
};
static ngx_str_t  pm_undefined = ngx_string("\x1f\x1f\x1f\x1f_");


typedef struct {
    ngx_rbtree_t         rbtree;
    ngx_rbtree_node_t    sentinel;
    ngx_uint_t           width;
    ngx_atomic_t         dropped;
} ngx_http_pm_shctx_t;


typedef struct {
    ngx_rbtree_node_t    node;      /* node.key: crc32 of the series key */
    size_t               len;       /* the key's length; the key follows the slots */
    int64_t              slot[1];   /* width slots */
} ngx_http_pm_node_t;


typedef struct {
    ngx_http_pm_shctx_t *sh;
    ngx_slab_pool_t     *shpool;
    ngx_uint_t           width;
} ngx_http_pm_zone_t;


typedef struct {
    ngx_shm_zone_t      *zone;
    ngx_int_t            key;                        /* index of the key variable */
    ngx_flag_t           undefined_hosts;
    double               bound[PM_SETS][PM_MAX_BOUNDS];
    ngx_uint_t           nbounds[PM_SETS];
    ngx_uint_t           offset[PM_HISTOGRAMS];      /* 0-based slot of each histogram's sum */
    ngx_uint_t           width;
    ngx_msec_t           logged;                     /* when this worker last logged a full zone */
} ngx_http_pm_main_conf_t;


typedef struct {
    ngx_flag_t           enable;
} ngx_http_pm_loc_conf_t;


static ngx_int_t ngx_http_pm_init(ngx_conf_t *cf);
static ngx_int_t ngx_http_pm_add_variables(ngx_conf_t *cf);
static void *ngx_http_pm_create_main_conf(ngx_conf_t *cf);
static char *ngx_http_pm_init_main_conf(ngx_conf_t *cf, void *conf);
static void *ngx_http_pm_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_pm_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static char *ngx_http_pm_zone(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_pm_key(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_pm_buckets(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_pm_dump(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);


static ngx_command_t  ngx_http_pm_commands[] = {

    { ngx_string("portico_metrics_zone"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_pm_zone,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_metrics_key"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_pm_key,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_metrics_buckets"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_pm_buckets,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("portico_metrics_undefined_hosts"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_pm_main_conf_t, undefined_hosts),
      NULL },

    { ngx_string("portico_metrics"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_pm_loc_conf_t, enable),
      NULL },

    { ngx_string("portico_metrics_dump"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_pm_dump,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_portico_metrics_module_ctx = {
    ngx_http_pm_add_variables,             /* preconfiguration */
    ngx_http_pm_init,                      /* postconfiguration */
    ngx_http_pm_create_main_conf,          /* create main configuration */
    ngx_http_pm_init_main_conf,            /* init main configuration */
    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */
    ngx_http_pm_create_loc_conf,           /* create location configuration */
    ngx_http_pm_merge_loc_conf             /* merge location configuration */
};


ngx_module_t  ngx_http_portico_metrics_module = {
    NGX_MODULE_V1,
    &ngx_http_portico_metrics_module_ctx,  /* module context */
    ngx_http_pm_commands,                  /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


/* ---- the series store ---- */

static u_char *
ngx_http_pm_key_of(ngx_http_pm_node_t *n, ngx_uint_t width)
{
    return (u_char *) &n->slot[width];
}


/* Series are ordered by the key's hash, then by the key's bytes (ngx_memn2cmp): one total order for insert and
 * lookup. The tree's width is read from the zone, so the comparison needs it: the insert runs under the lock,
 * with the zone's width in pm_insert_width. */
static ngx_uint_t  pm_insert_width;

static void
ngx_http_pm_rbtree_insert(ngx_rbtree_node_t *temp, ngx_rbtree_node_t *node, ngx_rbtree_node_t *sentinel)
{
    ngx_rbtree_node_t   **p;
    ngx_http_pm_node_t   *n, *t;

    n = (ngx_http_pm_node_t *) node;

    for ( ;; ) {
        if (node->key < temp->key) {
            p = &temp->left;

        } else if (node->key > temp->key) {
            p = &temp->right;

        } else {
            t = (ngx_http_pm_node_t *) temp;
            p = (ngx_memn2cmp(ngx_http_pm_key_of(n, pm_insert_width), ngx_http_pm_key_of(t, pm_insert_width),
                              n->len, t->len) < 0) ? &temp->left : &temp->right;
        }

        if (*p == sentinel) {
            break;
        }

        temp = *p;
    }

    *p = node;
    node->parent = temp;
    node->left = sentinel;
    node->right = sentinel;
    ngx_rbt_red(node);
}


static ngx_http_pm_node_t *
ngx_http_pm_lookup(ngx_http_pm_shctx_t *sh, ngx_uint_t hash, u_char *key, size_t len)
{
    ngx_int_t            rc;
    ngx_rbtree_node_t   *node, *sentinel;
    ngx_http_pm_node_t  *n;

    node = sh->rbtree.root;
    sentinel = sh->rbtree.sentinel;

    while (node != sentinel) {
        if (hash < node->key) {
            node = node->left;
            continue;
        }

        if (hash > node->key) {
            node = node->right;
            continue;
        }

        n = (ngx_http_pm_node_t *) node;
        rc = ngx_memn2cmp(key, ngx_http_pm_key_of(n, sh->width), len, n->len);
        if (rc == 0) {
            return n;
        }

        node = (rc < 0) ? node->left : node->right;
    }

    return NULL;
}


/* Empties the zone (on a reload that changes the bucket layout: old series would be read with the wrong slots). */
static void
ngx_http_pm_clear(ngx_http_pm_zone_t *z)
{
    ngx_rbtree_node_t  *node;

    ngx_shmtx_lock(&z->shpool->mutex);

    while (z->sh->rbtree.root != z->sh->rbtree.sentinel) {
        node = ngx_rbtree_min(z->sh->rbtree.root, z->sh->rbtree.sentinel);
        ngx_rbtree_delete(&z->sh->rbtree, node);
        ngx_slab_free_locked(z->shpool, node);
    }

    z->sh->width = z->width;

    ngx_shmtx_unlock(&z->shpool->mutex);
}


static ngx_int_t
ngx_http_pm_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    ngx_http_pm_zone_t  *z = shm_zone->data;
    ngx_http_pm_zone_t  *old = data;
    size_t               len;

    if (old) {
        z->sh = old->sh;
        z->shpool = old->shpool;
        /* the tree keeps a pointer to its insert function: point it at this cycle's copy of the module */
        z->sh->rbtree.insert = ngx_http_pm_rbtree_insert;
        if (z->sh->width != z->width) {
            ngx_http_pm_clear(z);
        }
        return NGX_OK;
    }

    z->shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (shm_zone->shm.exists) {
        z->sh = z->shpool->data;
        return NGX_OK;
    }

    z->sh = ngx_slab_alloc(z->shpool, sizeof(ngx_http_pm_shctx_t));
    if (z->sh == NULL) {
        return NGX_ERROR;
    }

    z->shpool->data = z->sh;
    ngx_rbtree_init(&z->sh->rbtree, &z->sh->sentinel, ngx_http_pm_rbtree_insert);
    z->sh->width = z->width;
    z->sh->dropped = 0;

    len = sizeof(" in portico_metrics_zone \"\"") + shm_zone->shm.name.len;
    z->shpool->log_ctx = ngx_slab_alloc(z->shpool, len);
    if (z->shpool->log_ctx == NULL) {
        return NGX_ERROR;
    }
    ngx_sprintf(z->shpool->log_ctx, " in portico_metrics_zone \"%V\"%Z", &shm_zone->shm.name);
    z->shpool->log_nomem = 0;

    return NGX_OK;
}


/* ---- counting ---- */

/* Adds one observation to histogram h of series s: amount to its sum (milliseconds or bytes), one to its count and
 * one to the first bucket whose bound is >= value (in the bound's unit: seconds or bytes). */
static ngx_inline void
ngx_http_pm_observe(ngx_http_pm_main_conf_t *mcf, int64_t *s, ngx_uint_t h, int64_t amount, double value)
{
    ngx_uint_t   i, n, set, o;
    double      *b;

    set = pm_set_of[h];
    b = mcf->bound[set];
    n = mcf->nbounds[set];
    o = mcf->offset[h];

    for (i = 0; i < n; i++) {
        if (value <= b[i]) {
            break;
        }
    }

    s[o] += amount;
    s[o + 1]++;
    s[o + 2 + i]++;
}


/* An upstream time as metrics count it: only when exactly one upstream answered the request and the time was
 * measured (as ingress-nginx, which reads $upstream_*_time as a number: "0.002, 0.004" and "-" count nothing). */
static ngx_int_t
ngx_http_pm_upstream_ms(ngx_http_request_t *r, ngx_uint_t which, ngx_msec_int_t *ms)
{
    ngx_http_upstream_state_t  *state;
    ngx_msec_int_t              v;

    if (r->upstream_states == NULL || r->upstream_states->nelts != 1) {
        return NGX_DECLINED;
    }

    state = r->upstream_states->elts;
    v = (ngx_msec_int_t) (which == 0 ? state->response_time : which == 1 ? state->header_time : state->connect_time);

    if (v == -1) {
        return NGX_DECLINED;
    }

    *ms = ngx_max(v, 0);
    return NGX_OK;
}


static ngx_int_t
ngx_http_pm_log_handler(ngx_http_request_t *r)
{
    u_char                     *key, *p, buf[1024];
    size_t                      len;
    uint32_t                    hash;
    ngx_str_t                  *method, *mk, undefined;
    ngx_uint_t                  status, i, size, width;
    ngx_time_t                 *tp;
    ngx_msec_int_t              ms;
    int64_t                    *s;
    ngx_http_pm_zone_t         *z;
    ngx_http_pm_node_t         *n;
    ngx_http_pm_loc_conf_t     *lcf;
    ngx_http_pm_main_conf_t    *mcf;
    ngx_http_variable_value_t  *vv;
    ngx_str_t                   label;

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_portico_metrics_module);
    if (!lcf->enable) {
        return NGX_OK;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_portico_metrics_module);
    if (mcf->zone == NULL || mcf->key == NGX_ERROR) {
        return NGX_OK;
    }

    vv = ngx_http_get_indexed_variable(r, mcf->key);
    if (vv == NULL || vv->not_found || vv->len == 0) {
        if (!mcf->undefined_hosts) {
            return NGX_OK;
        }
        undefined = pm_undefined;
        mk = &undefined;

    } else {
        label.data = vv->data;
        label.len = vv->len;
        mk = &label;
    }

    if (r->err_status) {
        status = r->err_status;
    } else if (r->headers_out.status) {
        status = r->headers_out.status;
    } else if (r->http_version == NGX_HTTP_VERSION_9) {
        status = 9;
    } else {
        status = 0;
    }

    i = (r->method > NGX_HTTP_UNKNOWN && r->method <= NGX_HTTP_CONNECT && (r->method & (r->method - 1)) == 0)
        ? (ngx_uint_t) __builtin_ctz((unsigned int) r->method) : 0;
    method = &pm_methods[i];

    /* the series key: labels \x1f status \x1f method */
    size = mk->len + 1 + NGX_INT_T_LEN + 1 + method->len;
    if (size <= sizeof(buf)) {
        key = buf;
    } else {
        key = ngx_pnalloc(r->pool, size);
        if (key == NULL) {
            return NGX_OK;
        }
    }
    p = ngx_cpymem(key, mk->data, mk->len);
    *p++ = PM_SEP;
    if (status >= 100 && status < 1000) {
        *p++ = (u_char) ('0' + status / 100);
        *p++ = (u_char) ('0' + status / 10 % 10);
        *p++ = (u_char) ('0' + status % 10);
    } else {
        p = ngx_sprintf(p, "%ui", status);
    }
    *p++ = PM_SEP;
    p = ngx_cpymem(p, method->data, method->len);
    len = p - key;
    hash = ngx_murmur_hash2(key, len);

    z = mcf->zone->data;
    width = mcf->width;

    ngx_shmtx_lock(&z->shpool->mutex);

    if (z->sh->width != width) {
        /* a reload changed the bucket layout and emptied the zone: this (old) worker no longer counts */
        ngx_shmtx_unlock(&z->shpool->mutex);
        return NGX_OK;
    }

    n = ngx_http_pm_lookup(z->sh, hash, key, len);
    if (n == NULL) {
        n = ngx_slab_alloc_locked(z->shpool, offsetof(ngx_http_pm_node_t, slot) + width * sizeof(int64_t) + len);
        if (n == NULL) {
            (void) ngx_atomic_fetch_add(&z->sh->dropped, 1);
            ngx_shmtx_unlock(&z->shpool->mutex);
            if (ngx_current_msec - mcf->logged >= 60000 || mcf->logged == 0) {
                mcf->logged = ngx_current_msec ? ngx_current_msec : 1;
                ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "portico: the portico_metrics zone is full: "
                              "requests of new series are not counted (see $portico_metrics_dropped); raise "
                              "lua-shared-dicts portico_metrics");
            }
            return NGX_OK;
        }
        ngx_memzero(n->slot, width * sizeof(int64_t));
        n->len = len;
        ngx_memcpy(ngx_http_pm_key_of(n, width), key, len);
        n->node.key = hash;
        pm_insert_width = width;
        ngx_rbtree_insert(&z->sh->rbtree, &n->node);
    }

    s = n->slot;
    s[0]++;

    tp = ngx_timeofday();
    ms = (ngx_msec_int_t) ((tp->sec - r->start_sec) * 1000 + (tp->msec - r->start_msec));
    ms = ngx_max(ms, 0);
    ngx_http_pm_observe(mcf, s, PM_REQUEST_TIME, ms, (double) ms / 1000);

    if (ngx_http_pm_upstream_ms(r, 0, &ms) == NGX_OK) {
        ngx_http_pm_observe(mcf, s, PM_RESPONSE_TIME, ms, (double) ms / 1000);
    }
    if (ngx_http_pm_upstream_ms(r, 1, &ms) == NGX_OK) {
        ngx_http_pm_observe(mcf, s, PM_HEADER_TIME, ms, (double) ms / 1000);
    }
    if (ngx_http_pm_upstream_ms(r, 2, &ms) == NGX_OK) {
        ngx_http_pm_observe(mcf, s, PM_CONNECT_TIME, ms, (double) ms / 1000);
    }

    ngx_http_pm_observe(mcf, s, PM_REQUEST_LENGTH, r->request_length, (double) r->request_length);
    ngx_http_pm_observe(mcf, s, PM_RESPONSE_SIZE, r->connection->sent, (double) r->connection->sent);
    ngx_http_pm_observe(mcf, s, PM_BYTES_SENT, r->connection->sent, (double) r->connection->sent);

    ngx_shmtx_unlock(&z->shpool->mutex);

    return NGX_OK;
}


/* ---- the dump ---- */

static ngx_int_t
ngx_http_pm_dump_handler(ngx_http_request_t *r)
{
    u_char                   *p, *key;
    size_t                    size;
    ngx_int_t                 rc;
    ngx_uint_t                i, h, width;
    ngx_buf_t                *b;
    ngx_chain_t               out;
    ngx_rbtree_node_t        *node, *root, *sentinel;
    ngx_http_pm_node_t       *n;
    ngx_http_pm_zone_t       *z;
    ngx_http_pm_main_conf_t  *mcf;
    u_char                    is_ms[PM_MAX_BOUNDS * PM_HISTOGRAMS + 64];

    if (r->method != NGX_HTTP_GET && r->method != NGX_HTTP_HEAD) {
        return NGX_HTTP_NOT_ALLOWED;
    }

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    mcf = ngx_http_get_module_main_conf(r, ngx_http_portico_metrics_module);

    r->headers_out.status = NGX_HTTP_OK;
    ngx_str_set(&r->headers_out.content_type, "text/plain");

    if (mcf->zone == NULL) {
        r->header_only = 1;
        r->headers_out.content_length_n = 0;
        return ngx_http_send_header(r);
    }

    z = mcf->zone->data;
    width = mcf->width;

    /* which slots are duration sums (kept in milliseconds, dumped in seconds) */
    ngx_memzero(is_ms, sizeof(is_ms));
    for (h = 0; h < PM_HISTOGRAMS; h++) {
        if (pm_set_of[h] == PM_SET_TIME) {
            is_ms[mcf->offset[h]] = 1;
        }
    }

    ngx_shmtx_lock(&z->shpool->mutex);

    if (z->sh->width != width) {
        ngx_shmtx_unlock(&z->shpool->mutex);
        return NGX_HTTP_SERVICE_UNAVAILABLE;
    }

    root = z->sh->rbtree.root;
    sentinel = z->sh->rbtree.sentinel;

    /* one pass to size the answer, one to write it; both under the lock, so the same series */
    size = 0;
    if (root != sentinel) {
        for (node = ngx_rbtree_min(root, sentinel); node; node = ngx_rbtree_next(&z->sh->rbtree, node)) {
            n = (ngx_http_pm_node_t *) node;
            for (i = 0; i < width; i++) {
                if (n->slot[i] != 0) {
                    size += n->len + 1 + NGX_INT_T_LEN + 1 + NGX_INT64_LEN + 6;
                }
            }
        }
    }

    b = ngx_create_temp_buf(r->pool, size ? size : 1);
    if (b == NULL) {
        ngx_shmtx_unlock(&z->shpool->mutex);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = b->pos;
    if (root != sentinel) {
        for (node = ngx_rbtree_min(root, sentinel); node; node = ngx_rbtree_next(&z->sh->rbtree, node)) {
            n = (ngx_http_pm_node_t *) node;
            key = ngx_http_pm_key_of(n, width);
            for (i = 0; i < width; i++) {
                if (n->slot[i] == 0) {
                    continue;
                }
                p = ngx_cpymem(p, key, n->len);
                if (is_ms[i]) {
                    p = ngx_sprintf(p, "\x1f%ui\t%L.%03L\n", i + 1, n->slot[i] / 1000, n->slot[i] % 1000);
                } else {
                    p = ngx_sprintf(p, "\x1f%ui\t%L\n", i + 1, n->slot[i]);
                }
            }
        }
    }

    ngx_shmtx_unlock(&z->shpool->mutex);

    b->last = p;
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;
    if (b->last == b->pos) {
        b->temporary = 0;
        b->sync = 1;
    }

    r->headers_out.content_length_n = b->last - b->pos;

    rc = ngx_http_send_header(r);
    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


static ngx_int_t
ngx_http_pm_dropped_variable(ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data)
{
    u_char                   *p;
    ngx_http_pm_zone_t       *z;
    ngx_http_pm_main_conf_t  *mcf;
    ngx_atomic_uint_t         dropped = 0;

    mcf = ngx_http_get_module_main_conf(r, ngx_http_portico_metrics_module);
    if (mcf->zone != NULL) {
        z = mcf->zone->data;
        dropped = z->sh->dropped;
    }

    p = ngx_pnalloc(r->pool, NGX_ATOMIC_T_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    v->len = ngx_sprintf(p, "%uA", dropped) - p;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;
    v->data = p;

    return NGX_OK;
}


/* ---- configuration ---- */

static ngx_int_t
ngx_http_pm_add_variables(ngx_conf_t *cf)
{
    ngx_http_variable_t  *var;
    ngx_str_t             name = ngx_string("portico_metrics_dropped");

    var = ngx_http_add_variable(cf, &name, NGX_HTTP_VAR_NOCACHEABLE);
    if (var == NULL) {
        return NGX_ERROR;
    }

    var->get_handler = ngx_http_pm_dropped_variable;

    return NGX_OK;
}


static void *
ngx_http_pm_create_main_conf(ngx_conf_t *cf)
{
    ngx_http_pm_main_conf_t  *mcf;

    mcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_pm_main_conf_t));
    if (mcf == NULL) {
        return NULL;
    }

    mcf->key = NGX_ERROR;
    mcf->undefined_hosts = NGX_CONF_UNSET;

    return mcf;
}


/* The slot layout, from the bucket sets: requests, then per histogram its sum, count and buckets (+Inf last). */
static char *
ngx_http_pm_init_main_conf(ngx_conf_t *cf, void *conf)
{
    ngx_http_pm_main_conf_t  *mcf = conf;
    ngx_http_pm_zone_t       *z;
    ngx_uint_t                h, w;

    ngx_conf_init_value(mcf->undefined_hosts, 0);

    w = 1;
    for (h = 0; h < PM_HISTOGRAMS; h++) {
        mcf->offset[h] = w;
        w += 2 + mcf->nbounds[pm_set_of[h]] + 1;
    }
    mcf->width = w;

    if (mcf->zone) {
        if (mcf->key == NGX_ERROR) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "portico_metrics_zone needs portico_metrics_key");
            return NGX_CONF_ERROR;
        }
        z = mcf->zone->data;
        z->width = w;
    }

    return NGX_CONF_OK;
}


static void *
ngx_http_pm_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_pm_loc_conf_t  *lcf;

    lcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_pm_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }

    lcf->enable = NGX_CONF_UNSET;

    return lcf;
}


static char *
ngx_http_pm_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_pm_loc_conf_t  *prev = parent;
    ngx_http_pm_loc_conf_t  *conf = child;

    ngx_conf_merge_value(conf->enable, prev->enable, 0);

    return NGX_CONF_OK;
}


static char *
ngx_http_pm_zone(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_pm_main_conf_t  *mcf = conf;
    ngx_str_t                *value, name = ngx_string("portico_metrics");
    ssize_t                   size;
    ngx_http_pm_zone_t       *z;

    if (mcf->zone) {
        return "is duplicate";
    }

    value = cf->args->elts;
    size = ngx_parse_size(&value[1]);
    if (size == NGX_ERROR || size < (ssize_t) (8 * ngx_pagesize)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "portico_metrics_zone \"%V\" is too small or invalid", &value[1]);
        return NGX_CONF_ERROR;
    }

    z = ngx_pcalloc(cf->pool, sizeof(ngx_http_pm_zone_t));
    if (z == NULL) {
        return NGX_CONF_ERROR;
    }

    mcf->zone = ngx_shared_memory_add(cf, &name, size, &ngx_http_portico_metrics_module);
    if (mcf->zone == NULL) {
        return NGX_CONF_ERROR;
    }

    if (mcf->zone->data) {
        return "is duplicate";
    }

    mcf->zone->init = ngx_http_pm_init_zone;
    mcf->zone->data = z;

    return NGX_CONF_OK;
}


static char *
ngx_http_pm_key(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_pm_main_conf_t  *mcf = conf;
    ngx_str_t                *value;

    value = cf->args->elts;
    if (value[1].len < 2 || value[1].data[0] != '$') {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "portico_metrics_key \"%V\" is not a variable", &value[1]);
        return NGX_CONF_ERROR;
    }

    value[1].len--;
    value[1].data++;

    mcf->key = ngx_http_get_variable_index(cf, &value[1]);
    if (mcf->key == NGX_ERROR) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_pm_buckets(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_pm_main_conf_t  *mcf = conf;
    ngx_str_t                *value;
    ngx_uint_t                set, i, n;
    double                    v;
    char                     *end;
    u_char                    num[64];

    value = cf->args->elts;

    if (ngx_strcmp(value[1].data, "time") == 0) {
        set = PM_SET_TIME;
    } else if (ngx_strcmp(value[1].data, "length") == 0) {
        set = PM_SET_LENGTH;
    } else if (ngx_strcmp(value[1].data, "size") == 0) {
        set = PM_SET_SIZE;
    } else {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "unknown bucket set \"%V\" (time, length or size)", &value[1]);
        return NGX_CONF_ERROR;
    }

    n = cf->args->nelts - 2;
    if (n > PM_MAX_BOUNDS) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "more than %d buckets in the \"%V\" set", PM_MAX_BOUNDS, &value[1]);
        return NGX_CONF_ERROR;
    }

    for (i = 0; i < n; i++) {
        if (value[i + 2].len == 0 || value[i + 2].len >= sizeof(num)) {
            goto invalid;
        }
        ngx_memcpy(num, value[i + 2].data, value[i + 2].len);
        num[value[i + 2].len] = '\0';
        v = strtod((char *) num, &end);
        if (*end != '\0' || !(v > -1e300 && v < 1e300) || (i > 0 && v <= mcf->bound[set][i - 1])) {
            goto invalid;
        }
        mcf->bound[set][i] = v;
    }

    mcf->nbounds[set] = n;

    return NGX_CONF_OK;

invalid:

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "invalid bucket bound \"%V\": a number, ascending", &value[i + 2]);
    return NGX_CONF_ERROR;
}


static char *
ngx_http_pm_dump(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_pm_dump_handler;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_pm_init(ngx_conf_t *cf)
{
    ngx_http_handler_pt        *h;
    ngx_http_core_main_conf_t  *cmcf;

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_LOG_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_pm_log_handler;

    return NGX_OK;
}
