#!/usr/bin/env bash
# Session 24's grid runner, moved to scripts/device_grids.sh in session 61 (its history: git log of this path); this
# path stays for the session scripts and records that name it.
exec bash scripts/device_grids.sh "$@"
