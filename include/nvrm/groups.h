/* SPDX-License-Identifier: MIT */
/*
 * nvrm/groups.h - the vocabulary the class and control rows use to say what
 * a class or control is for: the policy group it belongs to and the video
 * engine it drives. Which groups a policy allows is policy/'s business
 * (policy/groups.h); which group a row belongs to is a fact kept in the row
 * (nvrm/classes.def, nvrm/controls.def).
 */
#ifndef GPUSANDBOX_NVRM_GROUPS_H
#define GPUSANDBOX_NVRM_GROUPS_H

enum gs_group {
	GS_GROUP_COMPUTE,
	GS_GROUP_MEMORY,
	GS_GROUP_MONITORING,
	GS_GROUP_VIDEO,
	GS_GROUP_GRAPHICS,
	GS_GROUP_P2P,
	GS_GROUP_DEBUG,
	GS_GROUP_PRIVILEGED,
	GS_GROUP_N,
	GS_GROUP_NONE = GS_GROUP_N,
};

/* The video engines whose objects the policy's video.* keys cap. */
enum gs_engine {
	GS_ENGINE_NONE = -1,
	GS_ENGINE_NVDEC,
	GS_ENGINE_NVENC,
	GS_ENGINE_NVJPG,
	GS_ENGINE_OFA,
	GS_ENGINE_N,
};

#endif
