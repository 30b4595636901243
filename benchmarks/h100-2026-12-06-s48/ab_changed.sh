#!/usr/bin/env bash
# Session 48's A/B of changed overlay entries, moved to scripts/device_ab_changed.sh in session 61; this path stays
# for the session scripts and records that name it. SHAPES defaults to session 48's call 3 (SHAPES_CALL) as it did.
SHAPES=${SHAPES:-benchmarks/h100-2026-12-06-s48/${SHAPES_CALL:-call3}/shapes/changed} CALL=${CALL:-call3} \
  exec bash scripts/device_ab_changed.sh "$@"
