; Test kernels of hip_plugin_test, compiled at build time with llc-16 and
; ld.lld-16 into one code object per gfx target (CMakeLists.txt):
;   add_const(x, v, n):       x[i] += v for i < n
;   fill_via_shared(x, v, n): each lane writes v into dynamic LDS, waits at a
;                             barrier, reads it back and stores x[i] = v
; The group size is read from the dispatch packet (workgroup_size_x).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
declare void @llvm.amdgcn.s.barrier()

@dyn = external addrspace(3) global [0 x i32], align 4

define internal i32 @global_id() {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %dp = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %szp = getelementptr i8, ptr addrspace(4) %dp, i64 4
  %sz16 = load i16, ptr addrspace(4) %szp, align 4
  %sz = zext i16 %sz16 to i32
  %base = mul i32 %gid, %sz
  %i = add i32 %base, %tid
  ret i32 %i
}

define protected amdgpu_kernel void @add_const(ptr addrspace(1) %x, i32 %v, i32 %n) {
entry:
  %i = call i32 @global_id()
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %i64 = zext i32 %i to i64
  %p = getelementptr i32, ptr addrspace(1) %x, i64 %i64
  %old = load i32, ptr addrspace(1) %p, align 4
  %new = add i32 %old, %v
  store i32 %new, ptr addrspace(1) %p, align 4
  br label %done
done:
  ret void
}

define protected amdgpu_kernel void @fill_via_shared(ptr addrspace(1) %x, i32 %v, i32 %n) {
entry:
  %i = call i32 @global_id()
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %lp = getelementptr [0 x i32], ptr addrspace(3) @dyn, i32 0, i32 %tid
  store i32 %v, ptr addrspace(3) %lp, align 4
  call void @llvm.amdgcn.s.barrier()
  %rv = load i32, ptr addrspace(3) %lp, align 4
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %i64 = zext i32 %i to i64
  %p = getelementptr i32, ptr addrspace(1) %x, i64 %i64
  store i32 %rv, ptr addrspace(1) %p, align 4
  br label %done
done:
  ret void
}
