import sys, gzip, collections
# Usage: inclusive.py FOLDED.gz ROOT [DEPTH]: the share of ROOT's samples under each callee,
# from perf's call stacks folded one per line ("outer;...;inner count").
path, root = sys.argv[1], sys.argv[2]; depth = int(sys.argv[3]) if len(sys.argv)>3 else 3
tot=0; incl=collections.Counter(); selfc=collections.Counter()
for line in gzip.open(path,'rt'):
    stack, n = line.rsplit(' ',1); n=int(n)
    fr = stack.split(';')
    if root not in fr: continue
    i = fr.index(root)
    tot += n
    sub = fr[i+1:]
    path=[]
    for d,f in enumerate(sub[:depth]):
        path.append(f[:90])
        incl[tuple(path)] += n
print(root, tot)
def show(prefix, d):
    kids=[(k,v) for k,v in incl.items() if len(k)==d+1 and k[:d]==prefix]
    kids.sort(key=lambda x:-x[1])
    for k,v in kids:
        if v < tot*0.01: continue
        print('  '*d + f"{100*v/tot:5.1f}% {k[-1]}")
        show(k, d+1)
show((),0)
