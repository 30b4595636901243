"""Per shape: kernel-only µs of torch.matmul, ours (the tables), the best non-PDL variant and the best PDL twin, from
eval_one_file.sh --also_variants results (python3 pdl_table.py results.csv ...); then PDL twin vs its base, geomeans."""
import csv, math, sys, collections
def gm(v): return math.exp(sum(map(math.log, v))/len(v)) if v else float('nan')
for path in sys.argv[1:]:
    try: rows = list(csv.DictReader(open(path)))
    except OSError as e: print(path, e); continue
    by = collections.defaultdict(dict)
    for r in rows:
        if r['ok'] == 'True' and r['kernel_us']: by[r['mnk']][r['competitor']] = r
        elif r['ok'] != 'True': print('FAILED', r['mnk'], r['competitor'], r['reason'][:120])
    pair_k, pair_c, best_vs_torch, best_vs_ours, base_vs_torch = [], [], [], [], []
    print(f"== {path}\n{'mnk':18} {'torch':>7} {'ours':>7} {'base*':>7} {'pdl*':>7}  base*/pdl*  best-pdl-name")
    for mnk, d in by.items():
        t, o = float(d['torch.matmul']['kernel_us']), float(d['ours']['kernel_us'])
        base = {c: float(r['kernel_us']) for c, r in d.items() if c.startswith('ours:') and not c.endswith('_pdl')}
        pdl = {c: float(r['kernel_us']) for c, r in d.items() if c.endswith('_pdl')}
        if not pdl: continue
        for c, us in pdl.items():
            b = c.removesuffix('_pdl')
            if b in base:
                pair_k.append(base[b] / us)
                pair_c.append(float(d[b]['call_us']) / float(d[c]['call_us']))
        bp, bb = min(pdl, key=pdl.get), min(base.values())
        best_vs_torch.append(t / min(pdl[bp], o)); best_vs_ours.append(o / min(pdl[bp], o)); base_vs_torch.append(t / min(bb, o))
        print(f"{mnk:18} {t:7.2f} {o:7.2f} {bb:7.2f} {pdl[bp]:7.2f}  {bb/pdl[bp]:.3f}  {bp}")
    print(f"pdl vs its base, kernel-only: geomean {gm(pair_k):.3f}x over {len(pair_k)} pairs (min {min(pair_k, default=0):.3f}, max {max(pair_k, default=0):.3f}); per call {gm(pair_c):.3f}x")
    print(f"vs torch.matmul kernel-only: ours {gm([float(d['torch.matmul']['kernel_us'])/float(d['ours']['kernel_us']) for d in by.values()]):.3f}x, "
          f"min(ours, base variants) {gm(base_vs_torch):.3f}x, min(ours, pdl variants) {gm(best_vs_torch):.3f}x; min(ours,pdl) vs ours {gm(best_vs_ours):.3f}x")
