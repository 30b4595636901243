# Sourced by scripts/h200_*.sh on the offline GPU host: installs the carried wheels (.whl, made here with
# ../shared/device/wheelhouse.sh .whl) into /tmp/site and puts them on the path. The image's own torch stays in use.
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:${PYTHONPATH:-} && export PATH=/tmp/site/bin:$PATH
fi
