// useShard: placeholder while the scaffold lands; filled in next.
export {};
