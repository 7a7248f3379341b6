#!/bin/sh
# Runs INSIDE the image's root filesystem as root, after the Debian packages are installed: by the Containerfile
# (RUN) and by `make image` (mmdebstrap customize hook, in a chroot). POSIX sh, because that is what every base has.
set -eu

# Portico runs as 101:101 (kustomize/deployment.yaml; nginx's customary uid). Debian has no such user: create it
# unless the base already has one with that id.
if ! getent group 101 >/dev/null; then
  groupadd --system --gid 101 portico
fi
if ! getent passwd 101 >/dev/null; then
  useradd --system --uid 101 --gid 101 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin portico
fi

# Portico's runtime directory in the Deployment (an emptyDir mounts over it there). Created here too, owned by
# 101, so `--runtime-dir=/run/portico` also works where no volume is mounted and the root is writable.
mkdir -p /run/portico
chown 101:101 /run/portico
chmod 0700 /run/portico

# Debian's nginx package ships a default site and a system service; Portico writes its own nginx.conf under its
# runtime directory and passes -p/-c/-e, so nothing under /etc/nginx, /var/lib/nginx or /var/log/nginx is used.
# Nothing to change there: with a read-only root nginx could not write to them anyway, and the smoke test
# (image/smoke.sh) proves it never tries.

# No package lists, caches or logs of the build in the image.
rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /var/lib/dpkg/*-old \
  /var/log/apt /var/log/dpkg.log /var/log/alternatives.log /var/log/bootstrap.log
find /tmp /var/tmp -mindepth 1 -delete
