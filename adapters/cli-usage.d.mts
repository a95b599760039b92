export const COMMAND_NAMES: string[];
export function overview(version: string): string;
export function commandHelp(name: string): string;
export function seeHelp(name: string): string;
export function quickAnswer(args: string[], version: string): { text: string; code: number; toStderr?: boolean } | undefined;
