#!/usr/bin/env python3
"""The device stability check of the Thomas-PCR hybrids, modelled on the host (issue 23, stop 31).

The CUDA hybrid (solvers/cuda/pcr_warp_core.cuh, pcr_segment_registers.cuh) written out in numpy
in the precision of the kernel: segments of m rows per lane (modified Thomas), the reduced system
of S <= 32 separators, PCR on it (Sherman-Morrison when periodic), the fill. It records which
device tests fire (|c*| > 4 in the segment sweeps, first rows separately; |a|, |c| > 4 of each PCR
level: pcr_reduced) and compares the error with LAPACK ?gtsv / ?gesv on the pivoting tests
families. docs/pivoting.md ("Stop 31") quotes its output.
    /usr/bin/python3 scripts/pcr_check_model.py          # families x sizes, fp32 and fp64
"""
import numpy as np
from scipy.linalg import lapack
def shape(n):
    m=1
    while 32*m<n: m*=2
    S=(n+m-1)//m
    return m,S
def hybrid(a,b,c,d,periodic,T, tau=4.0):
    """simulate pcr_line / segment_reduce + reduced_solve. returns x, flags dict"""
    a=np.array(a,T);b=np.array(b,T);c=np.array(c,T);d=np.array(d,T)
    n=len(b)
    if not periodic: a[0]=0;c[n-1]=0
    m,S=shape(n)
    one=T(1);zero=T(0)
    fl={'seg':False,'seg_first':False,'red_ac':False,'red_growth':False,'red_den':False,'zero':False,'growth_max':0.0,'ac_max':0.0}
    segs=[]
    for s in range(32):
        st=s*m; ln=max(0,min(m,n-st))
        e=dict(Ld=zero,La=zero,Lg=zero,Fd=zero,Fa=zero,Fg=zero,ae=zero,be=one,ce=zero,dv=zero,len=ln)
        if ln>=2:
            piv=b[st]; r=one/piv; g=c[st]*r; al=a[st]*r; de=d[st]*r
            if abs(g)>tau: fl['seg_first']=True
            G=[g];AL=[al];DE=[de]
            for j in range(1,ln-1):
                aj=a[st+j]; piv=T(b[st+j]-aj*g); r=one/piv; g=T(c[st+j]*r)
                if abs(g)>tau: fl['seg']=True
                al=T(-(aj*al)*r); de=T((d[st+j]-aj*de)*r)
                G.append(g);AL.append(al);DE.append(de)
            e['Ld'],e['La'],e['Lg']=de,al,g
            for j in range(ln-3,-1,-1):
                gj=G[j]; de=T(DE[j]-gj*de); al=T(AL[j]-gj*al); g=T(-(gj*g))
                G[j]=g;AL[j]=al;DE[j]=de
            e['Fd'],e['Fa'],e['Fg']=de,al,g
            e['G']=G;e['AL']=AL;e['DE']=DE
        elif ln==1:
            e['La']=T(-1);e['Fg']=T(-1)
        if ln>=1:
            r_=st+ln-1; e['ae'],e['be'],e['ce'],e['dv']=a[r_],b[r_],c[r_],d[r_]
        segs.append(e)
    A=np.zeros(32,T);B=np.ones(32,T);C=np.zeros(32,T);D=np.zeros(32,T)
    for s in range(32):
        e=segs[s]; nx=segs[s+1 if s+1<S else 0]
        if e['len']==0: continue
        A[s]=T(-e['ae']*e['La']); B[s]=T(e['be']-e['ae']*e['Lg']-e['ce']*nx['Fa']); C[s]=T(-e['ce']*nx['Fg']); D[s]=T(e['dv']-e['ae']*e['Ld']-e['ce']*nx['Fd'])
    def pcr(A,B,C,Ds):
        lanes=np.arange(32)
        if np.any((B[:S]==0)|~np.isfinite(B[:S])): fl['zero']=True
        with np.errstate(all='ignore'):
            rb=(one/B).astype(T); aa=(A*rb).astype(T); cc=(C*rb).astype(T); Ds=[(x*rb).astype(T) for x in Ds]
        h=1
        act=lanes<S
        while h<S:
            am=np.zeros(32,T);cm=np.zeros(32,T);ap=np.zeros(32,T);cp=np.zeros(32,T)
            am[h:]=aa[:-h];cm[h:]=cc[:-h];ap[:-h]=aa[h:];cp[:-h]=cc[h:]
            dms=[];dps=[]
            for x in Ds:
                dm=np.zeros(32,T);dp=np.zeros(32,T);dm[h:]=x[:-h];dp[:-h]=x[h:];dms.append(dm);dps.append(dp)
            with np.errstate(all='ignore'):
                if np.any(act & ((np.abs(aa)>tau)|(np.abs(cc)>tau))): fl['red_ac']=True
                fl['ac_max']=max(fl['ac_max'],float(np.max(np.where(act,np.maximum(abs(aa),abs(cc)),0))))
                gr=np.abs(aa*cm)+np.abs(cc*ap)
                fl['growth_max']=max(fl['growth_max'],float(np.max(np.where(act,gr,0))))
                if np.any(act&(gr>tau)): fl['red_growth']=True
                den=(one-aa*cm-cc*ap).astype(T)
                if np.any(act&((den==0)|~np.isfinite(den))): fl['zero']=True
                r=(one/den).astype(T)
                Ds=[((x-aa*dm-cc*dp)*r).astype(T) for x,dm,dp in zip(Ds,dms,dps)]
                an=(-aa*am*r).astype(T); cn=(-cc*cp*r).astype(T)
            aa,cc=an,cn
            h*=2
        with np.errstate(all='ignore'):
            if np.any(act & ((np.abs(aa)>tau)|(np.abs(cc)>tau))): fl['red_ac']=True
        return Ds
    if (not periodic) or S==1:
        if periodic:
            B=B.copy(); B[0]=A[0]+B[0]+C[0]; A[0]=C[0]=0
        x=pcr(A,B,C,[D])[0]
    else:
        A0,B0,CS=A[0],B[0],C[S-1]
        gamma=T(-B0); q=T(A0/gamma)
        v=np.zeros(32,T)
        B=B.copy();A=A.copy();C=C.copy()
        B[0]=T(B[0]-gamma);A[0]=0;v[0]=gamma
        B[S-1]=T(B[S-1]-A0*CS/gamma);C[S-1]=0;v[S-1]=CS
        y,z=pcr(A,B,C,[D,v])
        den=T(1+z[0]+q*z[S-1]); f=T((y[0]+q*y[S-1])/den)
        x=(y-f*z).astype(T)
    # fill
    u=np.zeros(n,T)
    for s in range(S):
        e=segs[s]; ln=e['len']; st=s*m
        xl=x[s-1 if s>0 else S-1]; xs=x[s]
        for j in range(ln-1):
            u[st+j]=T(e['DE'][j]-e['AL'][j]*xl-e['G'][j]*xs)
        u[st+ln-1]=xs
    return u,fl
def dense(a,b,c,periodic):
    n=len(b);M=np.zeros((n,n))
    for i in range(n):
        M[i,i]+=b[i]
        if i>0 or periodic: M[i,(i-1)%n]+=a[i]
        if i<n-1 or periodic: M[i,(i+1)%n]+=c[i]
    return M
def lap(a,b,c,d,periodic,T):
    n=len(b)
    if periodic or n==1:
        M=dense(a,b,c,periodic).astype(T); 
        f=lapack.sgesv if T==np.float32 else lapack.dgesv
        lu,piv,x,info=f(M,d.astype(T).reshape(-1,1)); return x[:,0]
    f=lapack.sgtsv if T==np.float32 else lapack.dgtsv
    dl,dd,du,x,info=f(a[1:].astype(T),b.astype(T),c[:-1].astype(T),d.astype(T).reshape(-1,1)); return x[:,0]
def rel(x,r): return np.max(np.abs(x-r))/np.max(np.abs(r))
def family(f,n,rng):
    if f=='tiny':
        s=lambda: np.where(rng.uniform(-1,1,n)<0,-1,1)
        a=s()*rng.uniform(.5,1,n); c=s()*rng.uniform(.5,1,n); b=1e-8*rng.uniform(-1,1,n)
    elif f=='rs': a,b,c=rng.uniform(-1,1,(3,n))
    elif f=='toep': a=np.full(n,.6);b=np.ones(n);c=np.full(n,.6)
    elif f=='issue': a=np.ones(n);b=np.full(n,1e-8);c=np.ones(n)
    else:
        a,c=rng.uniform(-1,1,(2,n)); s=np.where(rng.uniform(-1,1,n)<0,-1,1); b=s*(abs(a)+abs(c)+.5+rng.uniform(.5,1,n))
    return a,b,c

if __name__ == "__main__":
    rng=np.random.default_rng(1)
    for T in (np.float32,np.float64):
      for fam in ('tiny','rs','toep','issue','dom'):
        for n in (1,2,3,5,17,31,33,64,65,127,255,257):
          for per in (False,True):
            worst=0; fired={}; miss=0; trials=40 if fam in('tiny','rs','dom') else 1
            gm=0; acm=0
            for t in range(trials):
              a,b,c=family(fam,n,rng); d=rng.uniform(-1,1,n)
              a,b,c,d=[x.astype(T).astype(np.float64) for x in (a,b,c,d)]
              if not per: a[0]=0;c[-1]=0
              try: ref=np.linalg.solve(dense(a,b,c,per).astype(np.longdouble) if False else dense(a,b,c,per),d)
              except Exception: continue
              xl=lap(a,b,c,d,per,T); el=rel(xl,ref)
              if not el<1e-2: continue
              u,fl=hybrid(a,b,c,d,per,T)
              ea=rel(u.astype(np.float64),ref)
              gm=max(gm,fl['growth_max']); acm=max(acm,fl['ac_max'])
              eps=np.finfo(T).eps
              ratio=ea/max(el,4*eps)
              seg=fl['seg'] or fl['zero']
              for k in ('seg','seg_first','red_ac','red_growth','zero'):
                fired[k]=fired.get(k,0)+fl[k]
              if ratio>10 and not (seg or fl['seg_first'] or fl['red_ac']): miss+=1; worst=max(worst,ratio)
            print(T.__name__,fam,n,'per' if per else '   ', 'trials',trials,'fired',fired,'MISSED(>10x, none of seg/first/red_ac)',miss,'%.3g'%worst,'growth_max %.3g acmax %.3g'%(gm,acm))
