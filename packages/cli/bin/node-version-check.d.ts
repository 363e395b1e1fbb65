export declare const minimumNodeVersion: readonly [number, number];
export declare function nodeVersionProblem(version: string, inRepository: boolean): string | null;
